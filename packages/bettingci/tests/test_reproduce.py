"""Smoke tests of the reproduction and the benchmark at tiny sizes, and the command line."""

import json

import numpy as np
import pytest

from bettingci.bench import bench, median_seconds
from bettingci.cli import main
from bettingci.data import bernoulli
from bettingci.reproduce import evaluate, reproduce


def test_evaluate_reports_every_method():
    rows, bounds = evaluate(bernoulli(0.5), 20, 0.05, R=30, grid=100, rng=np.random.default_rng(0))
    assert [r["method"] for r in rows][-2:] == ["clopper_pearson", "t_test"]
    assert all(0 <= r["miss"] <= 1 for r in rows) and bounds["star"].shape == (30,)
    assert rows[-1]["check"] == "ref" and rows[0]["check"] in ("PASS", "FAIL")


def test_reproduce_smoke(tmp_path):
    res = reproduce(
        quick=True, out=tmp_path, R=10, grid=50, sweep_ns=[10, 20], sweep_R=3, sweep_grid=50
    )
    assert len(res["summary"]) == 18  # 12 Bernoulli + 6 Beta settings
    assert {r["n"] for r in res["sweep"]["rows"]} == {10, 20}
    assert (tmp_path / "bettingci.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_smoke(tmp_path):
    res = bench(out=tmp_path, ns=[20, 40], grids=[100, 200], batch=(20, 10, 100))
    assert all(r["ms"] > 0 for r in res["time_vs_n"])
    assert {r["method"] for r in res["batched"]} == {"star", "hedged", "hoeffding"}
    assert (tmp_path / "scaling.png").is_file()
    assert median_seconds(lambda: None) >= 0


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["package"] == "bettingci" and doc["results"]["all_guaranteed_pass"]
