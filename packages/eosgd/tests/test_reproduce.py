import pytest

import eosgd.bench
import eosgd.reproduce
from eosgd.cli import main
from eosgd.paper import PAPER
from eosgd.reproduce import expected
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

BASE = {
    "regime": "subcritical",
    "stable_start": False,
    "behaviour": "converged",
    "S_star": 2.0,
    "S0": 2.6,
    "S_final": 2.3,
    "two_over_eta": 2.5,
    "growth": 1e5,
    "rate": 0.84,
    "rate_pred": 0.84,
    "exp_r": float("nan"),
    "exp_loss": float("nan"),
}


def test_expected_flags_what_contradicts_the_regime():
    assert expected(BASE, None) == ("transient, then converge flatter", "ok")
    assert expected({**BASE, "S_final": 2.0}, None)[1] == "MISMATCH"  # the flattest: not sub
    assert expected({**BASE, "rate": 0.9}, None)[1] == "MISMATCH"  # the wrong rate
    assert expected({**BASE, "behaviour": "diverged"}, None)[1] == "diverged"
    crit = {
        **BASE,
        "regime": "critical",
        "behaviour": "oscillating",
        "exp_r": -0.49,
        "exp_loss": -0.98,
    }
    assert expected(crit, None)[1] == "ok"
    assert expected({**crit, "exp_loss": -0.9}, None)[1] == "MISMATCH"
    sup = {**BASE, "regime": "supercritical", "behaviour": "period-2", "S_final": 2.0}
    assert expected(sup, 0.84)[1] == "ok"
    assert expected({**sup, "behaviour": "diverged"}, 1.2) == (
        "orbit unstable: no convergence",
        "ok",
    )
    assert expected(sup, 1.2)[1] == "MISMATCH"  # settled on an orbit predicted unstable


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The reproduction at tiny settings: 3 step sizes, 3000 steps, 3 amplitude points."""
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {
        "ratios": [0.8, 1.0, 1.05],
        "steps": 3000,
        "amplitude_ratios": [1.005, 1.02, 1.05],
        "tanh_steps": 3000,
        "flow_steps": 20_000,
    }
    monkeypatch.setitem(eosgd.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("GD shows the three regimes")
    assert len(claims) == 5 and all(c["verdict"] in VERDICTS for c in claims)
    assert len(doc["tables"]["regime_diagram"]) == 3 * 3
    rows = doc["tables"]["runs"]
    assert len(rows) == 3 * 3 * 3 and {r["check"] for r in rows} <= {"ok", "diverged", "MISMATCH"}
    checks = [r["check"] for r in rows]
    assert (claims[0]["verdict"] == "held") == all(c == "ok" for c in checks)
    for row in rows:  # the subcritical and supercritical rates sit on their predictions
        if row["behaviour"] in ("converged", "period-2") and row["check"] == "ok":
            assert float(row["rate or exponents"]) == pytest.approx(
                float(row["predicted"]), rel=0.01
            )
    slopes = [r["amplitude slope"] for r in doc["tables"]["amplitude_law"]]
    assert all(abs(s - 0.5) < 0.05 for s in slopes)
    for name in ("eosgd.png", "eosgd_tanh.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"steps": 300, "batches": [1, 27], "depths": [3, 30], "repeats": 1}
    monkeypatch.setitem(eosgd.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    table = {r["what"]: r for r in doc["tables"]["throughput"]}
    assert table["batch of 27"]["run-steps/s"] > table["one run"]["run-steps/s"]
    assert {r["case"] for r in doc["measurements"]} == {"throughput", "sweep", "vs batch", "vs p"}
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "eosgd" and doc["claims"][-1]["verdict"] == "held"
