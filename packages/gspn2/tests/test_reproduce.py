import json

import pytest

from gspn2.bench import bench
from gspn2.cli import main
from gspn2.paper import PAPER
from gspn2.reproduce import reproduce


def test_reproduce_smoke(tmp_path):
    results = reproduce(
        quick=True, seed=0, out=tmp_path, epochs=1, seeds=2, sides=[8, 16], subset=64
    )
    summary = {r["mixer"]: r for r in results["classification"]["summary"]}
    assert set(summary) == {"gspn2", "gspn1", "softmax"}
    assert all(0 <= r["accuracy_mean"] <= 1 and r["accuracy_std"] >= 0 for r in summary.values())
    # channel-shared propagation: fewer weight-head parameters than per-channel GSPN-1
    assert 0 < summary["gspn2"]["propagation_params"] < summary["gspn1"]["propagation_params"]
    assert summary["softmax"]["propagation_params"] == 0
    assert [r["N"] for r in results["scaling"]["rows"]] == [64, 256]
    assert (tmp_path / "gspn2.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_smoke(tmp_path):
    results = bench(quick=True, device="cpu", out=tmp_path, sides=[8, 16])
    assert results["gpu"] is None
    assert all(r["naive / torch"] > 1 for r in results["cpu"]["naive_vs_torch"])
    assert [r["N"] for r in results["cpu"]["torch_scaling"]] == [64, 256]
    assert (tmp_path / "bench.png").is_file()


def test_paper_record():
    assert PAPER.name == "gspn2" and PAPER.gpu and PAPER.arxiv == "2512.07884"


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["package"] == "gspn2" and doc["results"]["classification"]["epochs"] == 5
