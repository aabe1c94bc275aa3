import pytest

from paperkit.cli import run_bench, run_reproduce
from paperkit.results import VERDICTS
from paperkit.testing import check_results_file
from rmaseg import bench as bench_module
from rmaseg import reproduce as reproduce_module
from rmaseg.anchor import anchor_available
from rmaseg.paper import PAPER


def _with(fn, **smallest):
    """``fn`` at the smallest settings it allows, as the command calls it (a plain function:
    the command reads its source file for the commit)."""

    def run(**kwargs):
        return fn(**kwargs, **smallest)

    return run


def test_reproduce_writes_a_valid_results_file(tmp_path, monkeypatch):
    tiny = _with(reproduce_module.reproduce, n_binary=3, n_multiclass=2, draws=5, sizes=[100, 1000])
    monkeypatch.setattr(reproduce_module, "reproduce", tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
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


def test_bench_writes_a_valid_bench_file(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_module, "bench", _with(bench_module.bench, sizes=[100, 1000]))
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    rows = doc["measurements"]
    assert {"threshold", "RMA-sort", "RMA-linear", "exact RankDice"} <= {r["impl"] for r in rows}
    assert all(r["seconds"] > 0 for r in rows)
    linear = [r for r in rows if r["impl"] == "RMA-linear"]
    assert all(1 <= r["params"]["iterations"] < 15 for r in linear)
    assert doc["claims"][0]["statement"] == "RankSEG-RMA finds its decision in O(d) time"
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS)
    assert (tmp_path / "scaling.png").is_file()


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    """The quick run: the gains and near-Bayes claims hold, as the README says."""
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert [c["verdict"] for c in doc["claims"][:3]] == ["held", "held", "held"]
