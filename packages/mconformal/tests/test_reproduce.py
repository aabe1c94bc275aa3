import json

import pytest

from mconformal.bench import bench
from mconformal.cli import main
from mconformal.reproduce import METHODS, reproduce, summarise


def test_summarise_flags_undercoverage():
    good = [{"coverage": [0.9, 0.92], "size": 1.0, "singleton": 1.0} for _ in range(10)]
    bad = [
        {"coverage": [0.8 + 0.01 * (i % 2), 0.95], "size": 2.0, "singleton": 0.5} for i in range(10)
    ]
    assert summarise(good)["passed"] and abs(summarise(good)["min_cov"] - 0.9) < 1e-12
    assert not summarise(bad)["passed"] and summarise(bad)["size"] == 2.0


def test_reproduce_smoke(tmp_path):
    results = reproduce(quick=True, seed=0, out=tmp_path, splits=2, ms=[1, 3], n_test=200)
    rows = results["rows"]
    assert len(rows) == 2 * 2 * len(METHODS) + len(METHODS)
    assert {r["dataset"] for r in rows} == {"synthetic", "digits", "plantnet-style"}
    assert all(0 <= r["min class cov"] <= 1 for r in rows)
    at_m1 = [r for r in rows if r["dataset"] == "synthetic" and r["m"] == 1]
    assert len({round(r["mean size"], 12) for r in at_m1}) == 1  # every method = single at m = 1
    assert (tmp_path / "mconformal.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_smoke(tmp_path):
    results = bench(quick=True, out=tmp_path, sizes={"K": [3, 6], "m": [1, 4], "N": [50, 100]})
    assert results["pvalue_speed"][0]["speed-up"] > 1
    assert all(r["predict warm ms"] > 0 for r in results["by_K"] + results["by_m"])
    assert (tmp_path / "scaling.png").is_file()


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["package"] == "mconformal" and doc["results"]["verdict"] == "PASS"
