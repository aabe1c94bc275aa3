import json

import pytest

from hbp.bench import bench
from hbp.cli import main
from hbp.reproduce import reproduce


def test_reproduce_smoke(tmp_path):
    results = reproduce(
        quick=True,
        seed=0,
        out=tmp_path,
        n_samples=1500,
        calib_packs=6,
        calib_pack_len=256,
        loss_steps=3,
        measured_samples=60,
    )
    strategies = [r["strategy"] for r in results["simulation"]]
    assert strategies == ["padding", "naive", "sorted", "hbp"]
    assert results["loss_weighting"]["ave_token_max_gap"] < 1e-9
    assert len(results["sensitivity"]) == 3
    assert (tmp_path / "hbp.png").read_bytes()[:4] == b"\x89PNG"
    measured = results["measured"]["plans"]  # real training on 2 gloo processes
    assert list(measured) == ["naive", "sorted", "hbp"]
    assert all(m["epoch s"] > 0 and 0 <= m["mean ABR (measured)"] < 1 for m in measured.values())


def test_bench_smoke(tmp_path):
    results = bench(out=tmp_path, sizes=[2000, 4000])
    assert [r["n"] for r in results["rows"]] == [2000, 4000]
    assert all(r["hbp plan s"] > 0 for r in results["rows"])
    assert (tmp_path / "scaling.png").is_file()


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["package"] == "hbp" and len(doc["results"]["simulation"]) == 4
