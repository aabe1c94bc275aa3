import pytest

import oraclebandit.bench
import oraclebandit.reproduce
from oraclebandit.cli import main
from oraclebandit.paper import PAPER
from oraclebandit.reproduce import METHODS
from oraclebandit.schedules import n_levels
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The reproduction at tiny settings: both kinds of setting, T = 2^7, 2^8, 2 seeds."""
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"settings": ["topm-corr", "path"], "log2_T": [7, 8], "seeds": 2, "workers": 1}
    monkeypatch.setitem(oraclebandit.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 3 and all(c["verdict"] in VERDICTS for c in claims)
    assert claims[0]["statement"].startswith("AROQ and SROQ keep ~sqrt(T) regret")
    rows = doc["tables"]["regret"]
    assert len(rows) == 2 * 2 * len(METHODS)
    for r in rows:
        if r["method"] == "CUCB":
            assert r["queries"] == r["T"]
        if r["method"].startswith("SROQ"):
            assert r["rounds"] == n_levels(r["T"]) == 4
    # the query claim's verdict follows from the rows
    assert claims[1]["verdict"] == "held"
    assert (tmp_path / "oraclebandit.png").read_bytes()[:4] == b"\x89PNG"


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"log2_T": [8, 9], "expensive_log2_T": 9, "repeats": 1}
    monkeypatch.setitem(oraclebandit.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    runs = doc["tables"]["runs"]
    expensive = {r["method"]: r for r in runs if r["case"] == "expensive oracle"}
    assert expensive["CUCB"]["queries"] == 512 and expensive["AROQ"]["queries"] < 60
    assert expensive["AROQ"]["speed-up vs CUCB"] > 1  # 512 calls of 100 us vs a few dozen
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "oraclebandit" and doc["claims"][1]["verdict"] == "held"
