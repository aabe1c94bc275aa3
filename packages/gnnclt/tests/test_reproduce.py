import pytest

import gnnclt.bench
import gnnclt.reproduce
from gnnclt.cli import main
from gnnclt.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The quick reproduction at tiny settings: n = 2000, nu in {10, 20}, k in {1, 2}."""
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"n": 2000, "nus": [10, 20], "ks": [1, 2], "seeds": 1, "n_points": 100}
    monkeypatch.setitem(gnnclt.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 4 and all(c["verdict"] in VERDICTS for c in claims)
    assert claims[0]["statement"].startswith("Centred embeddings")
    rows = doc["tables"]["clt"]
    assert len(rows) == 4 and {r["k"] for r in rows} == {1, 2}
    over = doc["tables"]["oversmoothing"]
    assert over[-1]["ratio to k-1"] == pytest.approx(
        0.400, rel=0.02
    )  # |λ2|/λ1 of the mean matrix M
    # the oversmoothing verdict is the rule applied to the rows
    assert claims[2]["verdict"] in ("held", "partly")
    assert (tmp_path / "gnnclt.png").read_bytes()[:4] == b"\x89PNG"


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"n": [1000, 2000], "k": [1, 2], "m": [30, 60], "repeats": 1}
    monkeypatch.setitem(gnnclt.bench.RUNS, True, tiny)
    monkeypatch.setattr(gnnclt.bench, "NU", 10.0)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["case"] for r in doc["measurements"]} == {"sampling", "embedding", "w1"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 4 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert doc["claims"][0]["verdict"] == "not testable here"  # no n = 10^5 row
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "gnnclt" and all(c["verdict"] == "held" for c in doc["claims"])
