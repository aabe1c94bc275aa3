import pytest

import flyolf.bench
import flyolf.reproduce
from flyolf.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

TINY = {
    "noise": [0.0, 2.0],
    "seeds": 1,
    "n_kc": 300,
    "n_train": 3,
    "n_test": 3,
    "gain_noise": [0.0, 2.0],
    "gain_epochs": 1,
    "gain_n_kc": 100,
    "background_noise": [2.0],
    "sensitivity_noise": [2.0],
}


@pytest.mark.slow  # three calibrations and two BPTT runs: 35 s here, even at tiny sizes
def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(flyolf.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("Combining LI and SFA")
    assert len(claims) == 9 and all(c["verdict"] in VERDICTS for c in claims)
    assert claims[5]["statement"].endswith("(dopamine readout)")
    assert [r["sigma"] for r in doc["tables"]["accuracy"]] == [0.0, 2.0]
    calib = doc["tables"]["calibration"][0]
    assert calib["g_li"] > 0 and calib["g_sfa"] > 0 and calib["sfa_target"] > calib["sfa_floor"]
    assert [r["sigma"] for r in doc["tables"]["background_noise"]] == [2.0]
    variants = doc["tables"]["sensitivity"]
    assert len(variants) == 8 and {r["readout"] for r in variants} == {"logistic", "dopamine"}
    assert (tmp_path / "accuracy_vs_noise.png").stat().st_size > 0


def test_claims_follow_the_accuracies():
    noise = [0.0, 1.0, 2.0]
    acc = {
        "control": dict(zip(noise, [[0.80], [0.60], [0.30]], strict=True)),
        "LI": dict(zip(noise, [[0.90], [0.65], [0.25]], strict=True)),
        "SFA": dict(zip(noise, [[0.85], [0.66], [0.35]], strict=True)),
        "LI+SFA": dict(zip(noise, [[0.92], [0.70], [0.36]], strict=True)),
    }
    gains = [
        {"sigma": 0.0, "g_li_rel": 1.2, "g_sfa_rel": 0.9},
        {"sigma": 2.0, "g_li_rel": 0.8, "g_sfa_rel": 1.1},
    ]
    verdicts = [c.verdict for c in flyolf.reproduce.claims(acc, gains)]
    assert verdicts == ["held"] * 5
    acc["SFA"][2.0] = [0.2]
    acc["LI+SFA"][0.0] = [0.5]
    verdicts = [c.verdict for c in flyolf.reproduce.claims(acc, gains[::-1])]
    assert verdicts == ["partly", "held", "held", "partly", "not held"]


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"batches": [4], "n_kcs": [50, 100], "min_time": 0.0, "min_repeats": 1}
    monkeypatch.setitem(flyolf.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    rows = doc["measurements"]
    assert {(r["impl"], r["size"]) for r in rows} == {
        (impl, size) for impl in ("dense", "sparse") for size in (200, 400)
    }
    assert all(r["seconds"] > 0 for r in rows)
    assert [c["verdict"] in VERDICTS for c in doc["claims"]] == [True, True]
    assert len(doc["tables"]["throughput"]) == 2
    assert all((tmp_path / f).is_file() for f in doc["figures"])
