"""Checks of the simulators (arXiv 2505.17708, Sec. 6)."""

import numpy as np
import pytest

from tmex import MEASUREMENTS, LocationScaleSCM, ate_scenario, measurement


def test_scm_respects_the_graph_and_seed():
    A = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 0]])
    scm = LocationScaleSCM(A, seed=3)
    Z = scm.sample(4000, rng=0)
    assert Z.shape == (4000, 3) and np.isfinite(Z).all()
    assert abs(np.corrcoef(Z[:, 0], Z[:, 2])[0, 1]) < 0.05  # no path 0 → 2
    assert np.array_equal(Z, LocationScaleSCM(A, seed=3).sample(4000, rng=0))
    lin = LocationScaleSCM(A, linear=True, seed=3).sample(4000, rng=0)
    resid = lin[:, 1] - np.polyval(np.polyfit(lin[:, 0], lin[:, 1], 1), lin[:, 0])
    assert abs(resid.std() - 1.0) < 0.05  # linear-Gaussian: unit noise around a line


def test_scm_refuses_cyclic_order():
    with pytest.raises(ValueError, match="'adjacency'"):
        LocationScaleSCM(np.array([[0, 1], [0, 0]]))


def test_measurement_kinds():
    Z = np.random.default_rng(0).standard_normal((100, 3))
    for kind in MEASUREMENTS:
        blocks = measurement(kind, Z, rng=0)
        assert len(blocks) == 3 and all(b.shape == (100, 1) for b in blocks)
    assert np.array_equal(
        measurement("perfect_nonlinear", Z)[1][:, 0], 0.5 * Z[:, 1] ** 2 + Z[:, 1]
    )
    noisy = measurement("perfect_linear_noise", Z, rng=0)[0][:, 0] - Z[:, 0]
    assert 0.15 < noisy.std() < 0.25


def test_ate_models_differ_as_designed():
    a, c = ate_scenario(500, "A", seed=1), ate_scenario(500, "C", seed=1)
    diff = c["Z_hat"][0][:, 0] - a["Z_hat"][0][:, 0]
    assert np.allclose(diff, 0.2 * a["Z"][:, 1] - 0.1 * a["Z"][:, 2])
    assert np.allclose(a["covariates"], np.column_stack([a["X"], a["Y"]]))
