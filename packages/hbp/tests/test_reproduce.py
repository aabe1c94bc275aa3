from pathlib import Path

import pytest

import hbp.bench
import hbp.reproduce
from hbp.cli import main
from hbp.paper import PAPER
from hbp.reproduce import STRATEGY_ORDER, Settings, claims
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

# the quick run's shape at the smallest sizes (the measured epochs spawn processes: slow test)
TINY = Settings(
    n_samples=1500,
    seeds=1,
    n_gpus=32,
    calib_packs=6,
    calib_pack_len=256,
    loss_steps=3,
    measured=False,
    measured_samples=60,
)


def _quick(tmp_path: Path, monkeypatch, settings: Settings) -> dict:
    monkeypatch.setattr(hbp.reproduce, "QUICK", settings)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert doc["quick"] is True and doc["settings"]["loss_steps"] == settings.loss_steps
    assert all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert doc["claims"][0]["statement"].startswith("HBP trains long-context SFT")
    assert (tmp_path / "hbp.png").read_bytes()[:4] == b"\x89PNG"
    return doc


def test_quick_reproduction_follows_the_schema(tmp_path, monkeypatch):
    doc = _quick(tmp_path, monkeypatch, TINY)
    assert [r["strategy"] for r in doc["tables"]["simulation"]] == list(STRATEGY_ORDER)
    assert len(doc["tables"]["sensitivity"]) == 3
    loss = doc["claims"][3]
    assert loss["verdict"] == "held", loss  # Ave-Token's curves agree to fp64 rounding
    assert "measured" not in doc["tables"]


@pytest.mark.slow
def test_quick_reproduction_with_measured_epochs(tmp_path, monkeypatch):
    doc = _quick(tmp_path, monkeypatch, Settings(**{**vars(TINY), "measured": True}))
    measured = doc["tables"]["measured"]  # real training on 2 gloo processes
    assert [m["plan"] for m in measured] == ["naive", "sorted", "hbp"]
    assert all(m["epoch s"] > 0 and 0 <= m["mean ABR (measured)"] < 1 for m in measured)


def _rows(seeds, hbp_speedup, naive_abr, hbp_abr, hbp_cr):
    rows = []
    for s in seeds:
        for strategy in STRATEGY_ORDER:
            speed = {"padding": 0.4, "naive": 1.0, "sorted": 1.2, "hbp": hbp_speedup}[strategy]
            rows.append(
                {
                    "seed": s,
                    "strategy": strategy,
                    "hours": 1.0 / speed,
                    "speed-up": speed,
                    "mean ABR": {"naive": naive_abr, "hbp": hbp_abr}.get(strategy, 0.3),
                    "CR": hbp_cr if strategy == "hbp" else 1.0,
                }
            )
    return rows


@pytest.mark.parametrize(
    ("speedup", "naive_abr", "hbp_abr", "cr", "expected"),
    [
        (2.5, 0.5, 0.05, 0.05, ("held", "held", "held")),
        (1.4, 0.4, 0.09, 0.55, ("partly", "partly", "not held")),
        (1.1, 0.4, 0.5, 0.55, ("not held", "not held", "not held")),  # sorted is faster
    ],
)
def test_verdict_rules(speedup, naive_abr, hbp_abr, cr, expected):
    loss = {"ave_token_max_gap": 1e-16, "mean_max_gap": 0.03, "steps": 10}
    got = claims(_rows([0, 1], speedup, naive_abr, hbp_abr, cr), loss)
    assert tuple(c.verdict for c in got[:3]) == expected
    assert got[3].verdict == "held"
    loss["ave_token_max_gap"] = 1e-3
    assert claims(_rows([0], speedup, naive_abr, hbp_abr, cr), loss)[3].verdict == "not held"


def test_quick_bench_follows_the_schema(tmp_path, monkeypatch):
    monkeypatch.setattr(hbp.bench, "QUICK_SIZES", (2000, 4000))
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    plan = [m for m in doc["measurements"] if m["case"] == "plan"]
    assert sorted((m["impl"], m["size"]) for m in plan) == [
        ("hbp plan", 2000),
        ("hbp plan", 4000),
        ("naive_pack", 2000),
        ("naive_pack", 4000),
    ]
    assert all(m["seconds"] > 0 and m["peak_bytes"] >= 0 for m in doc["measurements"])
    assert doc["claims"][0]["verdict"] in VERDICTS
    assert (tmp_path / "scaling.png").is_file()


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "hbp" and len(doc["tables"]["simulation"]) == 4
