import json

import pytest

from rmaseg.bench import bench
from rmaseg.cli import main
from rmaseg.reproduce import reproduce


def test_reproduce_smoke(tmp_path):
    results = reproduce(
        quick=True, seed=0, out=tmp_path, n_binary=3, n_multiclass=2, draws=5, sizes=[100, 1000]
    )
    rules = [r["rule"] for r in results["binary"]["rows"]]
    assert "exact RankDice" in rules and "RMA dice (0.1)" in rules
    exact = {
        r["objects"]: r["E[Dice]"]
        for r in results["binary"]["rows"]
        if r["rule"] == "exact RankDice"
    }
    for r in results["binary"]["rows"]:  # nothing beats the exact Bayes rule in expectation
        assert r["E[Dice]"] <= exact[r["objects"]] + 1e-12
    assert {r["rule"] for r in results["multiclass"]["rows"]} >= {"argmax", "RMA iou (0.1)"}
    assert isinstance(results["claim_supported"], bool)
    assert (tmp_path / "rmaseg.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_smoke(tmp_path):
    results = bench(quick=True, device="cpu", out=tmp_path, sizes=[100, 1000])
    assert {"threshold", "RMA-sort", "RMA-linear", "exact RankDice"} <= {
        r["rule"] for r in results["rows"]
    }
    assert all(r["ms"] > 0 for r in results["rows"])
    assert all(1 <= r["iterations"] < 15 for r in results["rows"] if r["rule"] == "RMA-linear")
    assert (tmp_path / "scaling.png").is_file()


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["package"] == "rmaseg" and doc["results"]["claim_supported"] is True
