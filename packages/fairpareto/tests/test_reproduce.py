import numpy as np
import pytest

import fairpareto.bench
import fairpareto.reproduce
from fairpareto import MIFPO
from fairpareto.cli import main
from fairpareto.paper import PAPER
from fairpareto.reproduce import baseline_points
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file


def test_baseline_point_against_a_known_front():
    # levels 0.1 / 0.9 and 0.3 / 0.7 with equal masses: the Bayes classifier accepts half of
    # each group, so it already has parity and the front is flat at 0.5 * 0.9 + 0.5 * 0.7 = 0.8
    mf = MIFPO(solver="lp", n_bins=2, gammas=[0.0, 1.0])
    mf.fit_bins([0.1, 0.9], [0.5, 0.5], [0.3, 0.7], [0.5, 0.5], 0.5)
    A = np.array([1, 1, 0, 0] * 50)
    pred = np.array([1, 0, 1, 0] * 50)  # gap 0
    y = pred.copy()  # every prediction right: accuracy 1
    row = baseline_points(pred, y, A, mf, n_boot=20, seed=0)
    assert row["gap"] == 0 and row["accuracy"] == 1.0
    np.testing.assert_allclose(mf.accuracy_, [0.8, 0.8], atol=1e-9)
    assert row["front acc"] == pytest.approx(0.8, abs=1e-9)
    assert row["excess"] == pytest.approx(0.2, abs=1e-9) and row["SE"] < 1e-12
    # a randomised classifier: P(Yhat = 1) = 0.9 where y = 1 and 0.3 where y = 0, so its
    # expected accuracy is (0.9 + 0.7) / 2 and its gap 0 (the same in both groups)
    soft = np.where(y == 1, 0.9, 0.3)
    row = baseline_points(soft, y, A, mf, n_boot=20, seed=0)
    assert row["accuracy"] == pytest.approx(0.8, abs=1e-12) and row["gap"] < 1e-12
    assert abs(row["excess"]) < 1e-9


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The quick reproduction at the smallest settings: 2 bins, 2 gammas, 1 restart."""
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {
        **fairpareto.reproduce.RUNS[True],
        "n_bins": 2,
        "n_gammas": 2,
        "n_restarts": 1,
        "n_synthetic": 2000,
        "lambdas": [0.0, 10.0],
        "bounds": [],  # ExponentiatedGradient: in test_baselines.py
        "bootstrap": 10,
    }
    monkeypatch.setitem(fairpareto.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 4 and all(c["verdict"] in VERDICTS for c in claims)
    front = doc["tables"]["front synthetic"]
    assert [r["gamma"] for r in front] == [0.0, 1.0]
    assert claims[1]["verdict"] == (
        "held" if max(r["|MIFPO-LP|"] for r in front) <= 2e-3 else "not held"
    )
    rows = doc["tables"]["baselines synthetic"]
    assert [r["method"] for r in rows] == ["DP-penalised LR"] * 2 + ["ThresholdOptimizer"]
    assert all(r["above front"] in ("YES", "no") and r["train CPU s"] >= 0 for r in rows)
    flagged = [r for r in rows if r["excess"] > r["SE"]]
    assert (claims[0]["verdict"] == "held") == (not flagged)
    assert (tmp_path / "fairpareto.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow  # 18 DCCP runs and a fairlearn fit: about 6 s of CPU
@pytest.mark.filterwarnings("ignore:Setting a value on a Series via .at")  # inside fairlearn
@pytest.mark.filterwarnings("ignore:Setting an item of incompatible dtype")
def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {
        "dccp_bins": [2, 3],
        "lp_bins": [4, 10],
        "front_bins": 2,
        "front_gammas": 2,
        "logloss_bins": 2,
        "repeats": 1,
        "baseline_rows": 1000,
    }
    monkeypatch.setitem(fairpareto.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    cases = {r["case"] for r in doc["measurements"]}
    assert cases == {"dccp error", "dccp log_loss", "lp", "front", "baseline"}
    baselines = {r["impl"] for r in doc["measurements"] if r["case"] == "baseline"}
    assert baselines == {"DP-penalised LR", "ExponentiatedGradient", "ThresholdOptimizer"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    check_results_file(tmp_path / "results.json")
