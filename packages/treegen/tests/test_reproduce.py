import pytest

import treegen.bench
import treegen.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from treegen.paper import PAPER

TINY = {
    "train_jets": 40,
    "epochs": 1,
    "test_jets": 2,
    "samples": 8,
    "steps": 2,
    "beta1": (1.0, 3.0),
    "val_jets": 1,
    "val_samples": 4,
    "d_model": 8,
    "layers": 1,
    "heads": 2,
    "lr": 1e-3,
    "batch": 16,
}


@pytest.mark.slow  # builds two schedulers and trains three tiny networks (~15 s on 2 cores)
def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(treegen.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 5 and all(c["verdict"] in VERDICTS for c in claims)
    methods = {r["method"].split(" β₁=")[0] for r in doc["tables"]["methods"]}
    assert {
        "TreeGen (entropy)",
        "TreeGen (β₁t²)",
        "greedy",
        "beam-20",
        "kt",
        "C/A",
        "anti-kt",
        "random valid",
        "exact posterior (floor)",
    } <= methods
    rows = {r["method"]: r for r in doc["tables"]["methods"]}
    # exact draws are valid and beam search is valid on simulator jets
    assert rows["exact posterior (floor)"]["validity_%"] == 100.0
    assert rows["beam-20"]["validity_%"] == 100.0 and rows["random valid"]["validity_%"] == 100.0
    assert len(doc["tables"]["beta1_tuning"]) == 2
    assert (tmp_path / "treegen.png").stat().st_size > 0


def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"chains": 4, "steps": 2, "enum_sizes": [5, 6], "loop_sizes": [5], "min_time": 0.0}
    monkeypatch.setitem(treegen.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["impl"] for r in doc["measurements"]} == {
        "batched",
        "one at a time",
        "vectorised",
        "per tree",
    }
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    # 105 trees, scored one by one in Python, are slower than one vectorised pass
    assert doc["tables"]["likelihood_speedup"][0]["speedup"] > 1
    assert all((tmp_path / f).is_file() for f in doc["figures"])
