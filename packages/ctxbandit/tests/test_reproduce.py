import math

import pytest

import ctxbandit.bench
import ctxbandit.reproduce
from ctxbandit.cli import main
from ctxbandit.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file


def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"Ts": [64, 128], "seeds": 2, "extend": [], "sweep_T": 64, "sweep_seeds": 2}
    monkeypatch.setitem(ctxbandit.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 6 and all(c["verdict"] in VERDICTS for c in claims)
    rows = doc["tables"]["regret"]
    assert len(rows) == 2 * len(ctxbandit.reproduce.METHODS)
    assert all(math.isfinite(r["regret"]) and r["SE"] >= 0 for r in rows)
    sweep = doc["tables"]["k_sweep"]
    calls = {r["oracle calls"] for r in sweep if r["method"] == "Reduction c=10"}
    assert len(calls) == 1 and claims[4]["verdict"] == "held"  # identical across k
    assert all(r["R/R_uniform"] == 1 for r in sweep if r["method"] == "Uniform")
    assert (tmp_path / "ctxbandit.png").read_bytes()[:4] == b"\x89PNG"


def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setitem(ctxbandit.bench.RUNS, True, {"Ts": [100, 200], "sweep_T": 40})
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["case"] for r in doc["measurements"]} == {"build", "vs T", "vs K"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "ctxbandit" and doc["claims"][0]["verdict"] in ("held", "partly")
