import numpy as np
import pytest

import tmex.bench
import tmex.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from tmex.cli import main
from tmex.paper import PAPER


def test_quick_reproduction_at_tiny_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"K": 2, "n": 200, "reps": 2, "ate_n": 300, "ate_reps": 4}
    monkeypatch.setitem(tmex.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 5 and all(c["verdict"] in VERDICTS for c in claims)
    demo = doc["tables"]["demonstration"]
    assert len(demo) == len(tmex.reproduce.DEMO_ROWS)
    assert all(0 <= r["T-MEX mean"] <= 4 for r in demo)
    mixed = next(r for r in demo if r["kind"] == "mixed")
    assert mixed["T-MEX mean"] == 2  # K(K-1) exact linear leaks, always detected
    # the headline's verdict is the rule applied to the rows
    perfect = [r["T-MEX mean"] for r in demo[:4]]
    rule = (
        max(perfect) <= 1.5
        and mixed["T-MEX mean"] >= 0.9 * 2
        and mixed["R2 summary"] > 0.8
        and mixed["MCC"] > 0.8
    )
    assert claims[0]["verdict"] == ("held" if rule else "not held")
    ate = {r["model"]: r for r in doc["tables"]["ate"]}
    assert set(ate) == {"A", "B", "C"} and ate["C"]["R2(Zhat0,z0)"] > 0.9
    assert (tmp_path / "tmex.png").read_bytes()[:4] == b"\x89PNG"


def test_quick_bench_at_tiny_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"K": [2, 4], "n": [100, 200], "B": [49, 199], "repeats": 1, "regressors": ["linear"]}
    monkeypatch.setitem(tmex.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    cases = {r["case"] for r in doc["measurements"]}
    assert cases >= {"vs K", "vs n", "bootstrap", "regressor"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 4 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert np.isfinite(doc["data"]["slopes"]["vs K"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "tmex" and doc["claims"][0]["verdict"] == "held"
