"""Checks of the comparison scores and the ATE by adjustment (arXiv 2505.17708, Sec. 6)."""

import numpy as np

from tmex import ate_adjustment, ate_scenario, mcc, r2_matrix


def test_mcc_and_r2_on_permuted_rescaled_sign_flipped_copy():
    # check 7
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((400, 4))
    Z_hat = Z[:, [2, 0, 3, 1]] * np.array([-2.0, 0.5, 3.0, -1.0]) + 7.0
    assert abs(mcc(Z, Z_hat) - 1.0) < 1e-12
    assert abs(r2_matrix(Z, Z_hat).max(axis=1).mean() - 1.0) < 1e-12


def test_mcc_on_a_hand_example():
    # columns a = (1, 2, 3, 4), b = (1, -1, 1, -1) (uncorrelated); Ẑ = (b, a): MCC = 1
    a = np.array([1.0, 2.0, 3.0, 4.0])
    b = np.array([1.0, -1.0, 1.0, -1.0])
    Z = np.column_stack([a, b])
    Z_hat = np.column_stack([b, a])
    assert abs(mcc(Z, Z_hat) - 1.0) < 1e-12
    # c - 2.5 = (1.5, .5, -1.5, -.5): corr(c, a) = -4 / 5 = -0.8, corr(c, b) = 0 / ... = 0
    c = np.array([4.0, 3.0, 1.0, 2.0])
    got = mcc(Z, np.column_stack([c, c]))
    # |corr| = [[0.8, 0], [0.8, 0]]: the matching pairs one copy with a, the other with b
    assert abs(got - (0.8 + 0.0) / 2) < 1e-12


def test_r2_matrix_multicolumn_block_is_regression_r2():
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((300, 2))
    block = np.column_stack([Z[:, 0] + Z[:, 1], Z[:, 0] - Z[:, 1]])
    r2 = r2_matrix(Z, [block, Z[:, [0]]])
    assert r2.shape == (2, 2) and np.allclose(r2[0], 1.0)
    assert abs(r2[1, 0] - 1.0) < 1e-12 and r2[1, 1] < 0.05


def test_ate_adjustment_noiseless_recovery():
    # check 8: 1e-10
    rng = np.random.default_rng(2)
    adj = rng.standard_normal((100, 3))
    x = adj @ [1.0, -1.0, 0.5] + rng.standard_normal(100)
    y = 1.7 * x + adj @ [2.0, 0.3, -4.0] + 5.0
    assert abs(ate_adjustment(y, x, adj) - 1.7) < 1e-10


def test_ate_scenario_ground_truth():
    # check 9: adjusting for the true z0 → within 0.05 of 2.0 at n = 20k
    d = ate_scenario(20_000, "A", seed=0)
    assert abs(ate_adjustment(d["Y"], d["X"], d["Z"][:, 0]) - 2.0) < 0.05
    assert d["true_ate"] == 2.0
    # not adjusting is confounded by z0: X = z0 + z1 + ε → bias 2 · 1/3
    assert abs(ate_adjustment(d["Y"], d["X"]) - 2.0) > 0.5
