import numpy as np
import pytest

from eosgd import fit_linear_rate, fit_power_law


def test_power_law_is_exact_on_a_power_law():
    t = np.arange(1, 100_001)
    a, c, r2 = fit_power_law(t, 2.5 * t**-0.7, 10, 1e5)
    assert (
        a == pytest.approx(-0.7, abs=1e-12) and c == pytest.approx(2.5) and r2 == pytest.approx(1)
    )


def test_power_law_weights_every_decade_equally():
    """Dense t and log-spaced t give the same exponent for a curve whose local slope drifts
    (v = t^-1/2 (1 + 10/t)): the weights by log t spacing make the fit a function of the
    curve, not of the sampling. An unweighted fit on dense t would follow the last decade."""
    dense = np.arange(10, 100_001).astype(float)
    sparse = np.unique(np.geomspace(10, 100_000, 300).astype(int)).astype(float)

    def curve(t):
        return t**-0.5 * (1 + 10 / t)

    a_dense = fit_power_law(dense, curve(dense))[0]
    a_sparse = fit_power_law(sparse, curve(sparse))[0]
    assert a_dense == pytest.approx(a_sparse, abs=2e-3)
    unweighted = np.polyfit(np.log(dense), np.log(curve(dense)), 1)[0]
    assert abs(unweighted - a_dense) > 5 * abs(a_sparse - a_dense)


def test_power_law_window_and_refusals():
    t = np.arange(1.0, 1001.0)
    v = np.where(t < 100, 1.0, t**-1.0)
    assert fit_power_law(t, v, 100, 1000)[0] == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="'v' parameter of fit_power_law must be positive"):
        fit_power_law(t, -v, 100, 1000)
    with pytest.raises(ValueError, match="'t' parameter of fit_power_law must be with at least 3"):
        fit_power_law(t, v, 10.5, 11.5)


def test_linear_rate():
    t = np.arange(100)
    assert fit_linear_rate(t, 3.0 * 0.93**t) == pytest.approx(0.93, rel=1e-12)
    alternating = 0.5**t * (1 + 0.1 * (-1) ** t)  # a period-two modulation leaves the rate
    assert fit_linear_rate(t, alternating) == pytest.approx(0.5, rel=1e-3)
