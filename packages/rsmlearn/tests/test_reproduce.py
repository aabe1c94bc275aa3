import numpy as np

import rsmlearn.bench
import rsmlearn.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from rsmlearn.cli import main
from rsmlearn.metrics import binary01_regret, ndcg_regret_linear
from rsmlearn.paper import PAPER


def test_regret_metrics_on_known_cases():
    eta = np.array([0.9, 0.2, 0.6])
    assert binary01_regret(np.array([1, 0, 1]), eta) == 0.0
    assert abs(binary01_regret(np.array([0, 0, 1]), eta) - 0.8 / 3) < 1e-12
    T = np.array([[0.1, 0.3]])
    assert ndcg_regret_linear(T, T) == 0.0
    assert ndcg_regret_linear(-T, T) > 0


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The quick reproduction at tiny settings: the verdicts are computed from the rows."""
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {
        "ns": [250, 1000],
        "queries": [200, 800],
        "seeds": 2,
        "n_test": 2000,
        "extra": False,
    }
    monkeypatch.setitem(rsmlearn.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 6 and all(c["verdict"] in VERDICTS for c in claims)
    slopes = {r["method"]: r["L2 slope"] for r in doc["tables"]["binary slopes"]}
    assert claims[0]["verdict"] == (
        "held"
        if all(-1.3 <= slopes[m] <= -0.7 for m in ("logistic", "exponential"))
        else "not held"
    )
    assert claims[2]["verdict"] == "held"  # the √ relation is a theorem: it must hold
    assert (tmp_path / "rsmlearn.png").read_bytes()[:4] == b"\x89PNG"


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(rsmlearn.bench.RUNS, True, {"ns": [500, 4000], "repeats": 1})
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["impl"] for r in doc["measurements"]} == {"ERM newton", "ERM lbfgs", "GLM-tron"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code
