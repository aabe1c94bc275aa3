"""The reproduction and the benchmark at tiny settings, through the command's code path."""

import pytest

import amvim.bench
import amvim.reproduce
from amvim.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

TINY = {
    "epochs": 1,
    "dim": 8,
    "depth": 3,
    "d_state": 2,
    "layers": (1, 2),
    "train_limit": 64,
    "test_limit": 64,
}


@pytest.mark.slow  # about 10 CPU seconds: three models trained
def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(amvim.reproduce.RUNS, True, {**amvim.reproduce.RUNS[True], **TINY})
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("Under training-free token pruning AMVim")
    assert len(claims) == 4 and all(c["verdict"] in VERDICTS for c in claims)
    assert claims[3]["verdict"] == "held"  # equal parameters and FLOPs: exact, in any run
    table = doc["tables"]["accuracy"]
    assert {r["model"] for r in table} == {"Vim", "AMVim", "ViT"}
    assert all(r["drop"] == 0 for r in table if r["rho"] == 1.0)
    assert all(0 <= r["acc"] <= 1 for r in table)
    assert (tmp_path / "pruning.png").stat().st_size > 0


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"lengths": [32, 64], "grids": [4], "batch": 2, "min_time": 0.0}
    monkeypatch.setitem(amvim.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    impls = {r["impl"] for r in doc["measurements"]}
    assert {"reference", "chunked", "recurrent", "Vim block", "AMVim block", "rho=0.5"} <= impls
    assert [c["verdict"] in VERDICTS for c in doc["claims"]] == [True] * 3
    assert all(r["FLOP ratio"] >= 1 for r in doc["tables"]["pruning"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])
