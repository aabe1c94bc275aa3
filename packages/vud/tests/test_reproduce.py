import pytest

import vud.bench
import vud.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from vud.paper import PAPER

TINY = {
    "pfn_steps": 3,
    "contexts_per_n": 2,
    "n_values": (2, 4),
    "grid_points": 3,
    "positional": True,
    "arms_steps": 2,
    "arms_batch": 4,
    "bandit_seeds": 2,
    "trials": 5,
}


@pytest.mark.slow  # trains three tiny PFNs and runs every row of the bound table
def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(vud.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("V_a(z) is an upper bound")
    assert len(claims) == 6 and all(c["verdict"] in VERDICTS for c in claims)
    assert claims[0]["verdict"] == "held"  # the exact oracle never violates its bound, at any size
    rows = {r["row"]: r for r in doc["tables"]["bound_quality"]}
    assert rows["oracle + VUD"]["violation_rate"] == 0 and rows["oracle + VUD"]["points"] == 12
    assert len(doc["tables"]["bandit"]) == 8
    assert (tmp_path / "vud.png").stat().st_size > 0
    assert (tmp_path / "pfn_logistic_3_0.pt").is_file()  # weights cached in the run folder


@pytest.mark.slow  # times 310 one-context predictor calls, several rounds
def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(vud.bench.RUNS, True, {"num_z": [2, 4], "min_time": 0.0, "train_steps": 2})
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    impls = {(r["impl"], r["size"]) for r in doc["measurements"]}
    assert {("decompose", 2), ("decompose", 4), ("batched", 15), ("per-call", 15)} <= impls
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert [c["verdict"] in VERDICTS for c in doc["claims"]] == [True, True]
