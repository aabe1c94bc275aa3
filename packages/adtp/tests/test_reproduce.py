import pytest

import adtp.bench
import adtp.reproduce
from adtp.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

TINY = {
    "train": 64,
    "clean_train": 48,
    "test": 40,
    "teacher_epochs": 1,
    "ig_train": 16,
    "ig_steps": 2,
    "joint_epochs": 1,
    "precision_items": 12,
    "precision_steps": 2,
    "decoy_free_adtp": False,
}
TINY_BENCH = {"lengths": [16, 24], "batches": [1, 2], "min_time": 0.0, "ig_steps": 2, "ig_batch": 4}


@pytest.mark.slow  # trains two tiny teachers and students: ~20 s of CPU
def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(adtp.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 5 and all(c["verdict"] in VERDICTS for c in claims)
    rows = doc["tables"]["methods"]
    assert {r["data"] for r in rows} == {"decoys", "decoy-free"}
    teacher = [r for r in rows if r["method"].startswith("teacher")]
    assert all(r["flops_reduction"] == 1.0 and r["delta_acc"] == 0.0 for r in teacher)
    ours = [r for r in rows if r["method"] == "AD-TP"]
    assert len(ours) == 1  # the decoy-free variant measures the teacher only here
    assert all(1.0 < r["flops_reduction"] < 6.0 for r in ours)  # layer 0 is never pruned: < L x
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(adtp.bench.RUNS, True, TINY_BENCH)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    table = doc["tables"]["speedup"]
    assert {(r["batch"], r["n"]) for r in table} == {(1, 16), (1, 24), (2, 16), (2, 24)}
    assert all(r["flops_reduction"] > 1.5 and r["speedup"] > 0 for r in table)
    assert all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])
