import math

import pytest

import streamforest.bench
import streamforest.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from streamforest.cli import main
from streamforest.paper import PAPER
from streamforest.reproduce import METHODS


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The reproduction at the smallest settings: 2 streams of 80 frames, budgets 64 and inf,
    one extra weight setting and one long stream."""
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {
        "streams": 2,
        "budgets": [64, math.inf],
        "n_frames": 80,
        "weights": [(1.0, 0.0, 0.0)],
        "weight_budgets": [64],
        "weight_streams": 1,
        "long_frames": 80,
        "long_streams": 1,
        "long_budget": 64,
    }
    monkeypatch.setitem(streamforest.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 6 and all(c["verdict"] in VERDICTS for c in claims)
    rows = doc["tables"]["memory"]
    assert len(rows) == 2 * len(METHODS) and len(doc["tables"]["weights"]) == 1
    assert len(doc["tables"]["long streams"]) == 4
    by = {(r["budget"], r["method"]): r for r in rows}
    assert all(by[("inf", m)]["retention"] == 1.0 for m in METHODS)
    # the headline's verdict is recomputed from the rows
    wins = [
        by[("64", "StreamForest")]["past acc"] > by[("64", b)]["past acc"]
        for b in ("uniform", "global ToMe")
    ]
    expected = "held" if all(wins) else ("partly" if any(wins) else "not held")
    assert claims[0]["verdict"] == expected
    assert (tmp_path / "streamforest.png").read_bytes()[:4] == b"\x89PNG"


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"frames": [30, 60], "events": [4, 16], "repeats": 1}
    monkeypatch.setitem(streamforest.bench.RUNS, True, tiny)
    monkeypatch.setattr(streamforest.bench, "NEW_EVENTS", 10)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["case"] for r in doc["measurements"]} == {"stream", "similarity update"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 2 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_recompute_all_makes_the_same_merges():
    events = streamforest.bench._events(40)
    forests = []
    for cls in (streamforest.PersistentEventMemoryForest, streamforest.bench.RecomputeAllForest):
        forest = cls(tokens_per_frame=8, quota=160)
        for k, tokens in enumerate(events):
            forest.add_event(tokens, 2 * k, 2 * k + 1)
            forest.consolidate(2 * (k + 1))
        forests.append(forest)
    a, b = forests
    assert a.merges == b.merges > 20 and a.similarities == b.similarities
    assert [(r.t_start, r.t_end) for r in a.roots] == [(r.t_start, r.t_end) for r in b.roots]


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "streamforest" and len(doc["claims"]) == 6
