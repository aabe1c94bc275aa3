"""Natural-image sets."""

import numpy as np
from sklearn.datasets import load_digits

from idenergy.data import _power_law_radii, load_digits_images, make_dead_leaves


def test_digits_are_the_sklearn_scans_upsampled():
    X = load_digits_images(16)
    assert X.shape == (1797, 1, 16, 16) and X.dtype == np.float32
    assert X.min() >= 0 and X.max() <= 1
    native = load_digits_images(8)
    assert np.allclose(native[:, 0], load_digits().images / 16.0, atol=1e-6)  # size 8: identity


def test_dead_leaves_statistics():
    X = make_dead_leaves(200, size=32, seed=0)
    assert X.shape == (200, 1, 32, 32) and X.min() >= 0 and X.max() <= 1
    assert np.array_equal(X, make_dead_leaves(200, size=32, seed=0))
    # occlusion gives flat regions: many neighbouring pixels differ by noise only (about 44 % by
    # less than 0.03 at noise 0.01; i.i.d. uniform pixels would give 6 %) ...
    steps = np.abs(np.diff(X, axis=3))
    assert (steps < 0.03).mean() > 0.3 and steps.max() > 0.5  # ... and sharp edges between leaves
    # power-law radii: E[r] = int r r^-3 / int r^-3 on [1, 16] = (1 - 1/16) / ((1 - 1/256) / 2)
    r = _power_law_radii(np.random.default_rng(1), 400_000, 1.0, 16.0)
    assert abs(r.mean() / ((1 - 1 / 16) / ((1 - 1 / 256) / 2)) - 1) < 0.01
    assert r.min() >= 1 and r.max() <= 16
