import pytest

from paperkit.cli import run_bench, run_reproduce
from paperkit.results import VERDICTS
from paperkit.testing import check_results_file
from rmaseg.anchor import anchor_available
from rmaseg.paper import PAPER


def test_reproduce_writes_a_valid_results_file(tmp_path):
    tiny = {"n_binary": 3, "n_multiclass": 2, "draws": 5, "sizes": [100, 1000]}
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path, overrides=tiny))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("RankSEG-RMA keeps the gains")
    assert {c["verdict"] for c in claims} <= set(VERDICTS) and len(claims) == 4
    assert (claims[3]["verdict"] == "not testable here") == (not anchor_available())
    binary = doc["tables"]["binary"]
    exact = {r["objects"]: r["E[Dice]"] for r in binary if r["rule"] == "exact RankDice"}
    for r in binary:  # nothing beats the exact Bayes rule in expectation
        assert r["E[Dice]"] <= exact[r["objects"]] + 1e-12
    assert {r["rule"] for r in doc["tables"]["multiclass"]} >= {"argmax", "RMA iou (0.1)"}
    assert (tmp_path / "rmaseg.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_writes_a_valid_bench_file(tmp_path):
    path = run_bench(
        PAPER, quick=True, device="cpu", out=tmp_path, overrides={"sizes": [100, 1000]}
    )
    doc = check_results_file(path)
    rows = doc["measurements"]
    assert {"threshold", "RMA-sort", "RMA-linear", "exact RankDice"} <= {r["impl"] for r in rows}
    assert all(r["seconds"] > 0 for r in rows)
    linear = [r for r in rows if r["impl"] == "RMA-linear" and r["case"] == "decision"]
    assert all(1 <= r["params"]["iterations"] < 15 for r in linear)
    ratios = {r["rule"]: r for r in doc["tables"]["ratios"]}  # alternating rounds at one d
    assert ratios["RMA-linear"]["time / RMA-linear"] == 1.0 and "RMA-sort" in ratios
    limits = doc["tables"]["limit"]  # the solver against passes over the same map
    assert [r["d"] for r in limits] == [1000] and limits[0]["solver / limit"] > 0
    assert doc["claims"][1]["statement"].startswith("The linear solver runs within 2x")
    assert doc["claims"][0]["statement"] == "RankSEG-RMA finds its decision in O(d) time"
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS)
    assert (tmp_path / "scaling.png").is_file()


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    """The quick run: the gains and near-Bayes claims hold, as the README says."""
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert [c["verdict"] for c in doc["claims"][:3]] == ["held", "held", "held"]
