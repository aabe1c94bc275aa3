import pytest

import symgfm.bench
import symgfm.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from symgfm.paper import PAPER


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    # the quick run's structure at toy size on KarateClub (the kNN graphs import sklearn: slow)
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {**symgfm.reproduce.RUNS[True], "steps": 2, "test_graphs": ["karate"]}
    monkeypatch.setitem(symgfm.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("Zero-shot TS-GNN is at least as accurate")
    assert all(c["verdict"] in VERDICTS for c in claims)
    assert claims[1]["verdict"] == claims[2]["verdict"] == "not testable here"
    assert [r["method"] for r in doc["tables"]["accuracy"]] == [
        "TSGNN (1 graph)",
        "LinearGNN",
        "LabelPropagation",
    ]
    assert (tmp_path / "symgfm.png").stat().st_size > 0


@pytest.mark.slow  # trains five toy models and draws the figure (about 20 s here)
def test_tiny_full_reproduction_claims(tmp_path, monkeypatch):
    # the full run's structure (3 sizes, ablations, end-to-end baseline) at toy size on KarateClub
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {
        **symgfm.reproduce.RUNS[False],
        "steps": 3,
        "seeds": 1,
        "train_graphs": [1, 2],
        "test_graphs": ["karate"],
        "e2e_epochs": 2,
    }
    monkeypatch.setitem(symgfm.reproduce.RUNS, False, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=False, out=tmp_path))
    assert len(doc["claims"]) == 5 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    methods = [r["method"] for r in doc["tables"]["accuracy"]]
    assert "TSGNN (2) ls_from=all_train" in methods and "EndToEndMeanGNN" in methods


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(symgfm.bench.RUNS, True, {"N": 200, "F": [8, 32], "repeats": 1})
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    rows = doc["measurements"]
    assert {(r["impl"], r["size"]) for r in rows} == {
        (i, f) for i in ("TSGNN forward", "least-squares maps") for f in (8, 32)
    }
    assert all(r["seconds"] > 0 for r in rows)
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
