import itertools

import numpy as np
import pytest
import scipy.stats
import torch

from paperkit.testing import assert_close, assert_param_error
from rmaseg import expected_dice, expected_iou, poisson_binomial_pmf, rankdice_exact, rma_objective
from rmaseg.baselines import threshold_predict
from rmaseg.exact import expected_dice_curve, expected_iou_curve, rankiou_exact


def _top(p, tau):
    mask = np.zeros(p.size, dtype=bool)
    mask[np.argsort(-p, kind="stable")[:tau]] = True
    return mask


def test_pmf_sums_to_one_matches_binomial_and_enumeration(rng):
    """The PMF sums to 1, equals the binomial for equal p, and the enumeration."""
    p = rng.random(40)
    assert abs(poisson_binomial_pmf(p).sum() - 1) < 1e-13
    same = np.full(30, 0.37)
    assert_close(
        poisson_binomial_pmf(same),
        scipy.stats.binom.pmf(np.arange(31), 30, 0.37),
        rtol=1e-10,
        atol=1e-15,
    )
    p8 = rng.random(8)
    ys = np.array(list(itertools.product([0, 1], repeat=8)))  # all 2^8 label maps
    weight = np.prod(np.where(ys == 1, p8, 1 - p8), axis=1)
    by_enumeration = np.bincount(ys.sum(1), weights=weight, minlength=9)
    assert_close(poisson_binomial_pmf(p8), by_enumeration, rtol=1e-12, atol=1e-15)
    assert poisson_binomial_pmf(torch.zeros(3, dtype=torch.float64))[0] == 1.0


@pytest.mark.parametrize("smooth", [0.0, 0.5])
def test_rma_is_a_lower_bound_of_the_exact_expectation(smooth, rng):
    """rma_objective <= E[Dice], E[IoU] for every top-tau mask (enumeration, d = 8)."""
    for trial in range(5):
        p = rng.random(8) ** (1 + trial)
        for tau in range(9):
            mask = _top(p, tau)
            for metric, expected in (("dice", expected_dice), ("iou", expected_iou)):
                bound = rma_objective(p, mask, metric, smooth)
                exact = expected(p, mask, smooth=smooth, method="enumerate")
                assert bound <= exact + 1e-12, (metric, tau, bound, exact)


@pytest.mark.parametrize("smooth", [0.0, 1.0, 0.25])
def test_curves_and_pmf_method_equal_enumeration(smooth, rng):
    """The O(d^2) quadrature curves and the PMF double sums against all 2^d label maps."""
    for d in (1, 4, 11):
        p = rng.random(d) ** 2
        curve_d, curve_j = expected_dice_curve(p, smooth), expected_iou_curve(p, smooth)
        for tau in range(d + 1):
            mask = _top(p, tau)
            ref_d = expected_dice(p, mask, smooth=smooth, method="enumerate")
            ref_j = expected_iou(p, mask, smooth=smooth, method="enumerate")
            assert abs(curve_d[tau] - ref_d) < 1e-12 and abs(curve_j[tau] - ref_j) < 1e-12
            assert abs(expected_dice(p, mask, smooth=smooth, method="pmf") - ref_d) < 1e-12
            assert abs(expected_iou(p, mask, smooth=smooth, method="pmf") - ref_j) < 1e-12
    # a mask that is not a top-tau set
    p = rng.random(9)
    mask = np.array([1, 0, 1, 0, 1, 0, 1, 0, 0], dtype=bool)
    assert abs(expected_dice(p, mask, method="pmf") - expected_dice(p, mask)) < 1e-12


def test_monte_carlo_agrees_and_is_seeded(rng):
    p = rng.random(30)
    mask = p > 0.4
    exact = expected_dice(p, mask)
    mc = expected_dice(p, mask, method="mc", n_draws=20_000, seed=1)
    assert abs(mc - exact) < 4 * 0.2 / np.sqrt(20_000) * 3  # a few standard errors
    assert mc == expected_dice(p, mask, method="mc", n_draws=20_000, seed=1)
    assert mc != expected_dice(p, mask, method="mc", n_draws=20_000, seed=2)


def test_rankdice_exact_is_optimal(rng):
    """Exact RankDice's E[Dice] >= every other top-tau mask and >= threshold's (d = 12)."""
    for _ in range(4):
        p = rng.random(12) ** 3
        best = expected_dice(p, rankdice_exact(p), method="enumerate")
        for tau in range(13):
            assert best >= expected_dice(p, _top(p, tau), method="enumerate") - 1e-12
        thr = threshold_predict(p.reshape(1, 1, 12)).reshape(12)
        assert best >= expected_dice(p, thr, method="enumerate") - 1e-12
        best_iou = expected_iou(p, rankiou_exact(p))
        assert all(best_iou >= expected_iou(p, _top(p, t)) - 1e-12 for t in range(13))
    t = rankdice_exact(torch.from_numpy(p))
    assert isinstance(t, torch.Tensor) and t.dtype == torch.bool


def test_exact_bad_inputs(rng):
    p = rng.random(5)
    assert_param_error(expected_dice, p, p > 0.5, method="exact", param="method")
    assert_param_error(expected_dice, p, p, param="mask", exc=TypeError)
    assert_param_error(expected_iou, p, p > 0.5, smooth=-1.0, param="smooth")
    assert_param_error(expected_dice, p, p > 0.5, method="mc", n_draws=0, param="n_draws")
    assert_param_error(
        expected_dice, rng.random(30), np.ones(30, bool), method="enumerate", param="method"
    )
    assert_param_error(poisson_binomial_pmf, np.array([0.2, 1.5]), param="p")
    error = assert_param_error(
        expected_dice, p, p > 0.5, method="mc", n_draws=10**13, param="n_draws"
    )
    assert "fit in memory" in str(error)
    assert_param_error(rankdice_exact, rng.random((2, 3)), param="p")
