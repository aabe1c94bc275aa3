import pytest

import flashbias.bench
import flashbias.reproduce
from flashbias.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

TINY_BENCH = {"lengths": [64, 128], "fwd_bwd_max": 128, "ranks": [2], "min_time": 0.01}


@pytest.mark.slow  # fits the NeuralFactorizer: building torch.optim.Adam imports torch._dynamo
def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {
        "lengths": [64, 128],
        "neural_steps": 5,
        "neural_ranks": (4, 8),
        "swin_steps": 3,
        "min_time": 0.01,
    }
    monkeypatch.setitem(flashbias.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("With exact factors FlashBias is faster")
    assert len(claims) == 4 and all(c["verdict"] in VERDICTS for c in claims)
    assert claims[1]["verdict"] == "held"  # exact factors: float64 round-off, in any run
    assert max(r["max_abs_dO"] for r in doc["tables"]["exactness"]) < 1e-4
    assert {r["N"] for r in doc["tables"]["speed_memory"]} == {64, 128}
    assert (tmp_path / "flashbias.png").stat().st_size > 0


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(flashbias.bench.RUNS, ("cpu", True), TINY_BENCH)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    rows = doc["measurements"]
    assert {(r["impl"], r["size"]) for r in rows} >= {("dense", 64), ("flashbias", 128)}
    assert all(r["peak_bytes"] is not None and r["seconds"] > 0 for r in rows)
    assert [c["verdict"] in VERDICTS for c in doc["claims"]] == [True, True]
    assert len(doc["tables"]["ratios"]) == 4 and all(
        r["speedup"] > 0 for r in doc["tables"]["ratios"]
    )
    assert all((tmp_path / f).is_file() for f in doc["figures"])
