"""The empirical frontier of a model sweep (the reproduction's ground truth)."""

import numpy as np

from ldafront import empirical_frontier


def test_lower_convex_hull_interpolation():
    # hand-made sweep: (0.2, 0.50), (0.1, 0.51), (0.0, 0.55) and a dominated (0.15, 0.53)
    dps = [0.2, 0.1, 0.0, 0.15]
    losses = [0.50, 0.51, 0.55, 0.53]
    got = empirical_frontier(dps, losses, [0.0, 0.05, 0.1, 0.15, 0.2, 0.3])
    np.testing.assert_allclose(got, [0.55, 0.53, 0.51, 0.505, 0.50, 0.50])


def test_nan_below_every_gap_and_convex():
    got = empirical_frontier([0.2, 0.1, 0.05], [0.5, 0.52, 0.56], [0.0, 0.07, 0.12])
    assert np.isnan(got[0]) and np.all(np.isfinite(got[1:]))
