import pytest

import sqmarket.bench
import sqmarket.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from sqmarket.cli import main
from sqmarket.paper import PAPER

TINY = {"markets": 4, "traders": 20, "sequences": 60, "length": 10, "states": 30}


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The reproduction at tiny settings: every table, the claims computed from them, the PNG."""
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(sqmarket.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("SQPM has a better worst-case monetary loss")
    assert len(claims) == 7 and all(c["verdict"] in VERDICTS for c in claims)
    tables = doc["tables"]
    assert set(tables) == {"axioms", "aggregation", "loss", "identical", "constrained", "adaptive"}
    assert len(tables["axioms"]) == 3 * 5 and len(tables["adaptive"]) == 3 * 3
    # the headline's verdict is the count of (sequence, outcome) pairs with SQPM > QMSR
    qmsr = [r for r in tables["identical"] if r["vs"] == "QMSR"]
    assert claims[0]["verdict"] == (
        "held" if sum(r["SQPM > other"] for r in qmsr) == 0 else "not held"
    )
    assert all(r["max (SQPM - other)"] <= 1e-9 for r in qmsr)
    assert (tmp_path / "sqmarket.png").read_bytes()[:4] == b"\x89PNG"


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {
        "sizes": [10, 1000, 4000],
        "loop_markets": 1,
        "sequences": 200,
        "loop_sequences": 5,
        "repeats": 1,
    }
    monkeypatch.setitem(sqmarket.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["case"] for r in doc["measurements"]} == {"per trade", "simulation", "adversarial"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert doc["data"]["adversarial"]["max_abs_difference"] < 1e-9
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "sqmarket" and doc["claims"][0]["verdict"] == "held"
