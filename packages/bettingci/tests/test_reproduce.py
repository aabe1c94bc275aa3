"""The reproduction and the benchmark through the command's machinery at tiny sizes, their
results files against paperkit's schema, and the verdict rules of the claims."""

import numpy as np
import pytest

from bettingci.data import bernoulli
from bettingci.intervals import lower_bound_batch
from bettingci.paper import PAPER
from bettingci.reproduce import HEDGED_RANDOMISED, claims, evaluate
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

HEADLINE = "STaR-Bets gives the tightest lower bounds among the methods with a finite-sample"


def test_evaluate_reports_every_method():
    rows, bounds = evaluate(bernoulli(0.5), 20, 0.05, R=30, grid=100, rng=np.random.default_rng(0))
    assert [r["method"] for r in rows][-2:] == ["clopper_pearson", "t_test"]
    assert all(0 <= r["miss"] <= 1 for r in rows) and bounds["star"].shape == (30,)
    assert rows[-1]["check"] == "ref" and rows[0]["check"] in ("PASS", "FAIL")


def test_the_hedged_baseline_is_deterministic_and_its_randomised_variant_labelled():
    # The paper's hedged CI (Waudby-Smith & Ramdas) inverts at the fixed threshold 1/delta: its
    # column does not depend on the generator's state; the randomised column does.
    def bounds(methods):
        rng = np.random.default_rng(0)
        return evaluate(bernoulli(0.5), 30, 0.05, R=40, grid=200, rng=rng, methods=methods)[1]

    found = bounds(("star", "hedged", HEDGED_RANDOMISED))
    X = bernoulli(0.5).sample(np.random.default_rng(0), 40, 30)
    fixed = lower_bound_batch(X, 0.05, "hedged", grid=200, randomize=False)
    np.testing.assert_array_equal(found["hedged"], fixed)
    np.testing.assert_array_equal(bounds((HEDGED_RANDOMISED, "hedged"))["hedged"], fixed)
    assert np.all(found[HEDGED_RANDOMISED] >= fixed)  # U <= 1 only lowers the threshold
    assert np.any(found[HEDGED_RANDOMISED] > fixed)


def test_reproduce_writes_a_valid_results_file(tmp_path):
    path = run_reproduce(
        PAPER,
        quick=True,
        out=tmp_path,
        overrides=dict(R=10, grid=50, sweep_ns=[10, 20], sweep_R=3, sweep_grid=50),
    )
    doc = check_results_file(path)
    assert doc["claims"][0]["statement"].startswith(HEADLINE)
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS) and len(doc["claims"]) == 5
    assert len(doc["tables"]["summary"]) == 18  # 12 Bernoulli + 6 Beta settings
    assert {r["n"] for r in doc["tables"]["sweep"]} == {10, 20}
    assert doc["settings"]["R"] == 10 and doc["quick"] is True
    assert (tmp_path / doc["figures"][0]).read_bytes()[:4] == b"\x89PNG"


def _row(method, gap, se=0.001, miss=0.0, check="PASS", dist="Beta(2,5)"):
    return {
        "distribution": dist,
        "n": 50,
        "delta": 0.05,
        "method": method,
        "mean gap": gap,
        "se gap": se,
        "miss": miss,
        "check": check,
    }


def _sweep(star, hedged):
    return [
        {"distribution": "Uniform", "n": 100, "method": m, "mean gap": g, "gap / oracle": g}
        for m, g in (("star", star), ("hedged", hedged))
    ]


@pytest.mark.parametrize(
    ("star", "verdict"), [(0.040, "held"), (0.0505, "held"), (0.060, "not held")]
)
def test_headline_verdict_follows_its_rule(star, verdict):
    """Held when STaR is smallest or within 2 standard errors (0.002 here) of the best."""
    rows = [
        _row("star", star),
        _row("bets", 0.070),
        _row("star_hoeffding", 0.060),
        _row("hedged", 0.050),
        _row("hoeffding", 0.090),
        _row("maurer_pontil", 0.095),
    ]
    found = claims(rows, _sweep(0.5, 0.6))
    assert found[0].statement.startswith(HEADLINE) and found[0].verdict == verdict
    assert found[2].verdict == "not testable here"  # no Bernoulli setting
    assert found[4].verdict == "held"  # 0.5 of the oracle at the largest n


def test_coverage_and_width_verdicts_fail_when_the_numbers_do():
    rows = [_row(m, 0.05) for m in ("star", "bets", "star_hoeffding", "hedged", "hoeffding")]
    rows.append(_row("maurer_pontil", 0.06, miss=0.2, check="FAIL"))
    found = claims(rows, _sweep(1.3, 1.1))
    assert found[1].verdict == "not held" and "maurer_pontil" in found[1].measured
    assert found[4].verdict == "not held" and "Uniform n=100" in found[4].why


def test_bench_writes_a_valid_bench_file(tmp_path):
    path = run_bench(
        PAPER,
        quick=True,
        device="cpu",
        out=tmp_path,
        overrides=dict(
            ns=[20, 40, 80], grids=[100, 200, 400], batch=(20, 10, 100), inversion=(2, (100, 300))
        ),
    )
    doc = check_results_file(path)
    cases = {m["case"] for m in doc["measurements"]}
    assert cases == {"time vs n", "time vs G", "batched", "memory", "inversion"}
    inversion = doc["tables"]["inversion"]
    assert [r["G"] for r in inversion] == [100, 300]
    assert all(r["whole / search"] > 0 and r["whole-grid floor s"] > 0 for r in inversion)
    assert doc["claims"][-1]["statement"].startswith("At n = 1000, G = 300, the bound search")
    assert all(m["seconds"] > 0 for m in doc["measurements"])
    assert all(m["peak_bytes"] >= 0 for m in doc["measurements"] if m["case"] == "memory")
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS)
    assert "log-log slopes (1 = linear) and time ratios at the largest n" in doc["tables"]
    assert (tmp_path / "scaling.png").is_file()


def test_the_command_refuses_a_gpu():
    from bettingci.cli import main

    assert main(["bench", "--device", "cuda"]) == 2


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    from bettingci.cli import main

    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["claims"][0]["statement"].startswith(HEADLINE)
    assert doc["claims"][1]["verdict"] == "held"  # coverage
