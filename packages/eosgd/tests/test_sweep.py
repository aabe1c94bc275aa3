import numpy as np
import pytest

from eosgd import analyse_trajectory, critical_lr, gd, manifold_start, regime_sweep
from eosgd.sweep import COLUMNS


def test_regime_sweep_reads_each_regime(problems):
    """Sub: converged with S* < S_inf < 2/eta at the predicted rate; crit: oscillating; super:
    period-2 at S*, at the rate of the orbit."""
    prob = problems["a"]
    w0 = manifold_start(prob, np.array([2.2, 2.6]))
    table = regime_sweep(prob, np.array([0.5, 0.9, 1.0, 1.1]), w0, steps=5000)
    assert set(COLUMNS) | {"start"} == set(table) and len(table["eta"]) == 8
    assert table["start"].tolist() == [0, 1] * 4
    assert table["behaviour"].tolist() == ["converged"] * 4 + ["oscillating"] * 2 + ["period-2"] * 2
    sub = table["regime"] == "subcritical"
    assert (
        (table["S_final"][sub] > 2) & (table["S_final"][sub] < table["two_over_eta"][sub])
    ).all()
    assert table["stable_start"].tolist()[:4] == [True, True, True, False]
    done = ~np.isnan(table["rate"])
    assert np.allclose(table["rate"][done], table["rate_pred"][done], rtol=1e-3)
    assert np.isnan(table["exp_r"][~(table["regime"] == "critical")]).all()
    assert np.allclose(table["S_final"][-2:], 2.0, atol=1e-10)
    assert np.allclose(table["amplitude"][-2:], 0.29105, atol=1e-5)


def test_analyse_a_single_run_and_divergence(problems):
    prob = problems["b"]
    one = analyse_trajectory(prob, gd(prob, np.array([1.1, 1.0, 0.95]), 0.3, 500))
    assert one["behaviour"].tolist() == ["converged"] and one["eta"].tolist() == [0.3]
    far = analyse_trajectory(prob, gd(prob, np.array([2.0, 1.5, 0.2]), 2.0, 500))
    assert far["behaviour"].tolist() == ["diverged"] and np.isnan(far["S_final"]).all()


def test_critical_exponents_in_the_table(problems):
    prob = problems["a"]
    table = regime_sweep(prob, np.array([critical_lr(prob)]), manifold_start(prob, 2.6), 20_000)
    assert table["exp_r"][0] == pytest.approx(-0.5, abs=0.03)
    assert table["exp_loss"][0] == pytest.approx(-1.0, abs=0.05)
    assert table["exp_dist"][0] == pytest.approx(-0.5, abs=0.05)
    assert table["exp_S"][0] == pytest.approx(-1.0, abs=0.1)
