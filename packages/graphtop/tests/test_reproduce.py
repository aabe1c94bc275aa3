import json

import pytest

from graphtop.bench import bench
from graphtop.cli import main
from graphtop.reproduce import METHODS, reproduce


def test_reproduce_smoke(tmp_path):
    results = reproduce(
        quick=True, seed=0, out=tmp_path, seeds=1, epochs=2, graphs=["KarateClub"], pretrain_steps=2
    )
    (cell,) = results["cells"]
    assert cell["graph"] == "KarateClub" and set(cell["acc"]) == set(METHODS)
    assert all(0 <= a[0] <= 1 for a in cell["acc"].values())
    assert set(cell["graphtop"]) == {"GraphTOP", "GraphTOP rho*=0.1"}
    assert all(0 <= st["density"] <= 1 for st in cell["graphtop"].values())
    assert results["graphs"]["KarateClub"]["num_test"] == 22
    assert (tmp_path / "graphtop.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_smoke(tmp_path):
    results = bench(out=tmp_path, quick=True, sizes=[200, 400], targets=[5, 10], degrees=[2.0, 4.0])
    assert [r["nodes"] for r in results["construction"]] == [200, 400]
    assert all(r["seconds"] > 0 for r in results["construction"])
    assert [r["targets"] for r in results["epoch"]] == [5, 10]
    mem = results["memory"]
    assert mem[1]["candidate_bytes"] > mem[0]["candidate_bytes"]
    assert (tmp_path / "bench.png").is_file()


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["package"] == "graphtop" and len(doc["results"]["cells"]) == 3
