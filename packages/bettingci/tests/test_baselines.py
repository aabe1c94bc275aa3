"""Closed-form baselines against their defining formulas."""

import math

import numpy as np
from scipy import stats

from bettingci import clopper_pearson, hoeffding, maurer_pontil, t_test
from paperkit.testing import assert_close


def test_clopper_pearson_solves_the_binomial_tail():
    """At the bound p, P(Bin(n, p) >= k) = delta (the exact test's boundary)."""
    X = np.zeros((4, 30))
    for i, k in enumerate((1, 7, 15, 30)):
        X[i, :k] = 1
    lcb = clopper_pearson(X, 0.05)
    tails = stats.binom.sf(X.sum(1) - 1, 30, lcb)
    assert_close(tails, np.full(4, 0.05), rtol=1e-9, atol=0)
    assert clopper_pearson(np.zeros((1, 30)), 0.05)[0] == 0.0


def test_hoeffding_and_maurer_pontil_formulas():
    x = np.random.default_rng(0).beta(2, 5, 40)
    n, L, L2 = 40, math.log(20), math.log(40)
    assert_close(hoeffding(x[None], 0.05)[0], x.mean() - math.sqrt(L / (2 * n)), rtol=1e-14, atol=0)
    var = np.var(x, ddof=1)
    mp = x.mean() - math.sqrt(2 * var * L2 / n) - 7 * L2 / (3 * (n - 1))
    assert_close(maurer_pontil(x[None], 0.05)[0], max(mp, 0.0), rtol=1e-14, atol=0)
    tt = x.mean() - stats.t.ppf(0.95, n - 1) * np.std(x, ddof=1) / math.sqrt(n)
    assert_close(t_test(x[None], 0.05)[0], tt, rtol=1e-14, atol=0)


def test_closed_forms_clip_to_the_unit_interval():
    X = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    for fn in (hoeffding, maurer_pontil, t_test):
        out = fn(X, 0.05)
        assert ((out >= 0) & (out <= 1)).all()
    assert t_test(X, 0.05)[1] == 1.0  # zero sample variance: the t bound has no width
