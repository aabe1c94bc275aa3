"""Power-law fits of the scale (check 8)."""

import numpy as np
import pytest

from ldafront import fit_power_law
from ldafront.powerlaw import power_law


@pytest.mark.parametrize(
    ("a", "b", "beta"), [(0.4, 3.0, 0.6), (0.38, 0.5, 0.25), (0.2, -0.4, 1.3), (0.1, 5.0, 0.05)]
)
def test_recovers_parameters_from_noiseless_points(a, b, beta):
    s = np.array([250.0, 500, 1000, 2000, 4000])
    got = fit_power_law(s, power_law(s, a, b, beta))
    np.testing.assert_allclose(got, (a, b, beta), rtol=1e-3)


def test_needs_three_positive_distinct_scales():
    with pytest.raises(ValueError, match="'scales'.*at least 3"):
        fit_power_law([1.0, 2.0], [0.5, 0.4])
    with pytest.raises(ValueError, match="'scales'.*positive"):
        fit_power_law([0.0, 2.0, 3.0], [0.5, 0.4, 0.3])


def test_floor_on_the_asymptote():
    s = np.array([250.0, 500, 1000, 2000])
    v = power_law(s, 0.38, 3.0, 0.6)
    # a floor below the asymptote changes nothing; one above it binds, and the fit stays a
    # least-squares fit of b and beta given a = floor
    np.testing.assert_allclose(fit_power_law(s, v, a_min=0.3), (0.38, 3.0, 0.6), rtol=1e-3)
    a, b, beta = fit_power_law(s, v, a_min=0.4)
    assert a == pytest.approx(0.4, abs=1e-9)
    free = np.sum((power_law(s, a, b, beta) - v) ** 2)
    for other in (0.3, 0.6, 1.0):
        basis = s**-other
        b_ls = basis @ (v - 0.4) / (basis @ basis)
        assert free <= np.sum((power_law(s, 0.4, b_ls, other) - v) ** 2) + 1e-15
