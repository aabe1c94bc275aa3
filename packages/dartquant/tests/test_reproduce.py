"""The reproduction and the bench through the ``dartquant`` command's own runners, at the
smallest sizes their keyword overrides allow (the quick runs take minutes), with the written
results.json / bench.json validated against paperkit's schemas."""

import math

import pytest

import dartquant.bench
import dartquant.reproduce
from dartquant.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

TINY_REPRODUCE = {
    "train_steps": 3,
    "n_chars": 20_000,
    "methods": ("none", "quarot", "dartquant", "spinquant_lite"),
    "e2e_steps": 1,
    "sweep_dims": [16, 32],
    "rotation_seeds": 2,
}
TINY_BENCH = {"dims": [16, 32], "model_dims": [32, 64], "e2e_steps": 2}


def test_registration():
    assert PAPER.load_reproduce() is dartquant.reproduce.reproduce
    assert PAPER.load_bench() is dartquant.bench.bench
    assert PAPER.gpu is False


def test_reproduce_writes_valid_results(tmp_path):
    path = run_reproduce(PAPER, quick=True, out=tmp_path, overrides=TINY_REPRODUCE)
    doc = check_results_file(path)
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("Calibrating rotations locally")
    assert len(claims) == 6 and all(c["verdict"] in VERDICTS for c in claims)
    # every method of this run is in the table, so every claim could be judged
    assert all(c["verdict"] != "not testable here" for c in claims)
    rows = doc["tables"]["perplexity"]
    assert [r["method"] for r in rows][:3] == [
        "FP (no quantisation)",
        "no rotation (RTN)",
        "QuaRot (random Hadamard)",
    ]
    assert all(math.isfinite(r["W4A4KV4_ppl"]) for r in rows)
    assert [r["seeds"] for r in rows[1:]] == [1, 2, 2, 1]
    peaks = doc["data"]["calib_peak_bytes"]
    assert peaks["dartquant"] > 0 and isinstance(peaks["dartquant"], int)
    assert [r["d"] for r in doc["tables"]["time_to_target"]] == [16, 32]
    assert doc["settings"]["methods"] == list(TINY_REPRODUCE["methods"])
    assert (tmp_path / doc["figures"][0]).stat().st_size > 0


def test_missing_methods_make_claims_untestable(tmp_path):
    report = dartquant.reproduce.reproduce(
        quick=True, seed=0, out=tmp_path, **{**TINY_REPRODUCE, "methods": ("none",)}
    )
    verdicts = [c.verdict for c in report.claims]
    assert verdicts[:5] == ["not testable here"] * 5


def test_bench_writes_valid_measurements(tmp_path):
    path = run_bench(PAPER, quick=True, device="cpu", out=tmp_path, overrides=TINY_BENCH)
    doc = check_results_file(path)
    rows = doc["measurements"]
    assert {(r["case"], r["impl"]) for r in rows} == {
        ("whip_step", "qr"),
        ("whip_step", "cayley"),
        ("calibration", "local"),
        ("calibration", "e2e"),
    }
    assert all(r["seconds"] > 0 for r in rows)
    assert all(r["peak_bytes"] > 0 for r in rows if r["case"] == "calibration")
    assert [c["verdict"] in VERDICTS for c in doc["claims"]] == [True] * 3
    slopes = doc["tables"]["slopes"][0]
    assert set(slopes) == {"qr_slope", "cayley_slope", "local_time_slope", "e2e_time_slope"}
    assert all((tmp_path / f).exists() for f in doc["figures"])


def test_bench_has_no_gpu_path(tmp_path):
    with pytest.raises(ValueError, match="'device'"):
        dartquant.bench.bench(quick=True, device="cuda", out=tmp_path)
