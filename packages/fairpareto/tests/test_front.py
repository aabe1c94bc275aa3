import numpy as np

from fairpareto import lower_convex_envelope
from fairpareto.front import cumulative_min


def test_envelope_is_convex_below_and_touches_the_hull():
    rng = np.random.default_rng(0)
    g = np.linspace(0, 1, 15)
    e = np.sort(rng.uniform(size=15))[::-1] + 0.05 * rng.standard_normal(15)
    env = lower_convex_envelope(g, e)
    assert np.all(env <= e + 1e-12)
    assert np.all(np.diff(env, 2) >= -1e-12)
    assert env[0] == e[0] and env[-1] == e[-1]  # the end points are on every lower hull
    assert np.isclose(env, e).sum() >= 2


def test_envelope_of_a_convex_sequence_is_itself():
    g = np.linspace(0, 1, 6)
    e = (1 - g) ** 2
    np.testing.assert_allclose(lower_convex_envelope(g, e), e, atol=1e-15)


def test_envelope_skips_nan_and_cummin():
    g = np.array([0.0, 0.5, 1.0])
    env = lower_convex_envelope(g, np.array([np.nan, 0.4, 0.2]))
    assert np.isnan(env[0]) and env[1] == 0.4
    np.testing.assert_array_equal(cumulative_min(np.array([0.5, 0.6, 0.4])), [0.5, 0.5, 0.4])
