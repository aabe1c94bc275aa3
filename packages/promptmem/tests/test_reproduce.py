import pytest

import promptmem.bench
import promptmem.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from promptmem.cli import main
from promptmem.paper import PAPER
from promptmem.reproduce import theory_rows

TINY = {
    "theory_n": [16],
    "theory_N": [1, 4],
    "ns": [2, 4],
    "steps": 100,
    "seeds": 1,
    "ranks": [2, 32],
    "inits": [0.02, 0.5],
    "fixed_seeds": 1,
}


def test_theory_rows_account_for_every_k():
    rows = theory_rows(16, 4, seed=0)
    assert [r["k"] for r in rows] == [1, 2, 4, 8, 16, 32, 64]  # ceil(sqrt(64)) = 8 already in
    assert all(r["exact"] == 1.0 and r["counted"] and r["checked"] == 16 for r in rows)
    assert all(r["m*s"] == 64 and r["max steps"] <= r["k"] for r in rows)


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The quick reproduction at tiny settings: every claim computed, results.json valid."""
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(promptmem.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 6 and all(c["verdict"] in VERDICTS for c in claims)
    # the construction's claims are exact and hold at any size
    assert claims[0]["verdict"] == "held" and claims[1]["verdict"] == "held"
    balance = doc["tables"]["A_balance"]
    assert all(r["ratio"] <= promptmem.reproduce.BALANCE_RATIO for r in balance)
    search = doc["tables"]["B_search"]
    assert [r["n"] for r in search] == [2, 4]
    found = all(r["m*"] is not None for r in search)
    assert claims[2]["verdict"] == ("held" if found else claims[2]["verdict"])
    assert {r["init"] for r in doc["tables"]["B_init"]} == {"0.02", "0.5"}
    assert (tmp_path / "promptmem.png").read_bytes()[:4] == b"\x89PNG"


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {
        "build_n": [16, 64, 256],
        "query_k": [4, 16, 64],
        "query_n": [16, 64, 256],
        "tune_n": [4, 16],
        "tune_m": [1, 8],
        "min_time": 0.0,
    }
    monkeypatch.setitem(promptmem.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["case"] for r in doc["measurements"]} == {
        "build vs nN",
        "query vs k",
        "query vs nN (k=sqrt)",
        "tune vs n",
        "tune vs m",
    }
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 4 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "promptmem" and doc["claims"][0]["verdict"] == "held"
