"""The reproduction and the bench through the ``alphadecay`` command's own runners, at the
smallest sizes their keyword overrides allow (the quick runs take minutes), with the written
results.json / bench.json validated against paperkit's schemas."""

import math

import pytest

import alphadecay.bench
import alphadecay.reproduce
from alphadecay.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

TINY_REPRODUCE = {
    "steps": 6,
    "seeds": 2,
    "configs": ((0.1, "Uniform"), (0.1, "AWD"), (0.1, "AlphaDecay")),
    "n_tokens": 30_000,
    "d": 32,
    "n_layers": 1,
    "update_every": 3,
}
TINY_BENCH = {"widths": [64, 96], "route_n": 96}


def test_registration():
    assert PAPER.load_reproduce() is alphadecay.reproduce.reproduce
    assert PAPER.load_bench() is alphadecay.bench.bench
    assert PAPER.gpu is False


def test_reproduce_writes_valid_results(tmp_path):
    path = run_reproduce(PAPER, quick=True, out=tmp_path, overrides=TINY_REPRODUCE)
    doc = check_results_file(path)
    claims = doc["claims"]
    assert claims[0]["statement"] == alphadecay.reproduce.STATEMENTS["ppl"]
    assert len(claims) == 4 and all(c["verdict"] in VERDICTS for c in claims)
    assert claims[3]["verdict"] != "not testable here"  # AWD is in this run
    rows = doc["tables"]["summary"]
    assert [r["scheme"] for r in rows] == ["Uniform", "AWD", "AlphaDecay"]
    assert all(math.isfinite(r["val_ppl"]) and r["seeds"] == 2 for r in rows)
    assert all(r["alpha_std"] > 0 for r in rows)
    (comparison,) = doc["tables"]["alphadecay_vs_uniform"]
    uniform, ours = rows[0], rows[2]
    assert comparison["ppl_gain_vs_uniform"] == pytest.approx(uniform["val_ppl"] - ours["val_ppl"])
    # the verdict follows its rule on the same numbers
    spread_held = ours["alpha_std"] < uniform["alpha_std"]
    assert claims[1]["verdict"] == ("held" if spread_held else "not held")
    assert len(doc["data"]["runs"]) == 6
    assert (tmp_path / doc["figures"][0]).stat().st_size > 0


def test_claims_without_both_schemes_are_untestable(tmp_path):
    report = alphadecay.reproduce.reproduce(
        quick=True, seed=0, out=tmp_path, **{**TINY_REPRODUCE, "configs": ((0.1, "Uniform"),)}
    )
    assert [c.verdict for c in report.claims] == ["not testable here"] * 4


def test_bench_writes_valid_measurements(tmp_path):
    path = run_bench(PAPER, quick=True, device="cpu", out=tmp_path, overrides=TINY_BENCH)
    doc = check_results_file(path)
    rows = doc["measurements"]
    assert {r["impl"] for r in rows} >= {"refresh", "train_step", "fit: median (Hill)"}
    assert all(r["seconds"] > 0 and r["repeats"] >= 5 for r in rows)
    assert len(doc["tables"]["refresh"]) == 4
    assert [c["verdict"] in VERDICTS for c in doc["claims"]] == [True, True]
    assert set(doc["tables"]["slopes"][0]) == {"refresh_vs_d", "step_vs_d"}
    assert (tmp_path / doc["figures"][0]).exists()


def test_bench_has_no_gpu_path(tmp_path):
    with pytest.raises(ValueError, match="'device'"):
        alphadecay.bench.bench(quick=True, device="cuda", out=tmp_path)
