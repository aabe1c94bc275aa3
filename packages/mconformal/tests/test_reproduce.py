import pytest

import mconformal.bench
import mconformal.reproduce
from mconformal.cli import main
from mconformal.paper import PAPER
from mconformal.reproduce import METHODS, summarise
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file


def test_summarise_flags_undercoverage():
    good = [{"coverage": [0.9, 0.92], "size": 1.0, "singleton": 1.0} for _ in range(10)]
    bad = [
        {"coverage": [0.8 + 0.01 * (i % 2), 0.95], "size": 2.0, "singleton": 0.5} for i in range(10)
    ]
    assert summarise(good)["passed"] and abs(summarise(good)["min_cov"] - 0.9) < 1e-12
    assert not summarise(bad)["passed"] and summarise(bad)["size"] == 2.0


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The quick reproduction at the smallest settings: 2 splits, m in {1, 3}, 200 instances."""
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"splits": 2, "ms": [1, 3], "n_test": 200, "m_max": 3}
    monkeypatch.setitem(mconformal.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("Aggregated p-values keep class-conditional coverage")
    assert len(claims) == 4 and all(c["verdict"] in VERDICTS for c in claims)
    rows = [r for table in doc["tables"].values() for r in table]
    assert len(rows) == 2 * 2 * len(METHODS) + len(METHODS)
    assert all(0 <= r["min class cov"] <= 1 for r in rows)
    at_m1 = [r for r in doc["tables"]["synthetic"] if r["m"] == 1]
    assert len({round(r["mean size"], 12) for r in at_m1}) == 1  # every method = single at m = 1
    # the headline's verdict is the coverage rule applied to the rows
    failed = [r for r in rows if r["check"] == "FAIL"]
    assert claims[0]["verdict"] == ("held" if not failed else "not held")
    assert (tmp_path / "mconformal.png").read_bytes()[:4] == b"\x89PNG"


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"K": [3, 6], "m": [1, 4], "N": [50, 100], "repeats": 1}
    monkeypatch.setitem(mconformal.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    speed = doc["tables"]["pvalue_speed"]
    assert speed[0]["speed-up"] > 1  # the vectorised p-values beat the per-instance loop
    assert {r["case"] for r in doc["measurements"]} >= {"pvalues", "vs K", "vs m", "digits"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 4 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "mconformal" and doc["claims"][0]["verdict"] == "held"
