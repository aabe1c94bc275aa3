"""Checks of the T-MEX count (arXiv 2505.17708, Sec. 4: T-MEX = Σ_ik |Ŵ_ik − W_ik|)."""

import numpy as np
import pytest

from tmex import CITestResult, TMEXResult, measurement, tmex_score


def _stub(Z, hats, table):
    """A CI test returning table[i, k], found by matching the arrays it receives."""

    def test(x, y, cond):
        k = next(j for j in range(Z.shape[1]) if np.array_equal(x[:, 0], Z[:, j]))
        i = next(j for j, h in enumerate(hats) if np.array_equal(y, h))
        return CITestResult(table[i, k], 0.0, "stub")

    return test


def test_count_is_the_hamming_distance():
    # check 5
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((50, 3))
    hats = [rng.standard_normal((50, 1)) for _ in range(2)]
    table = np.array([[0.001, 0.5, 0.04], [0.3, 0.2, 0.9]])
    W = np.array([[1, 0, 0], [0, 1, 0]])
    out = tmex_score(Z, hats, W=W, ci_test=_stub(Z, hats, table))
    # Ŵ = [[1,0,1],[0,0,0]] → differs at (0,2) and (1,1)
    assert out.score == 2 and out.normalized == 2 / 6
    assert out.W_hat.tolist() == [[1, 0, 1], [0, 0, 0]]
    assert np.array_equal(out.pvalues, table)
    hats3 = [rng.standard_normal((50, 1)) for _ in range(3)]
    table3 = np.full((3, 3), 0.5)
    np.fill_diagonal(table3, 0.0)
    ident = tmex_score(Z, hats3, ci_test=_stub(Z, hats3, table3))  # W=None → identity
    assert ident.score == 0 and np.array_equal(ident.W, np.eye(3, dtype=int))
    plain_float = tmex_score(Z, hats3, ci_test=lambda x, y, c: 0.01)
    assert plain_float.score == 6


def test_block_permutation_equivariance():
    # check 6: same rng → same score, W_hat rows permuted
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((300, 3))
    hats = measurement("perfect_linear_noise", Z, rng=2)
    hats[1] = hats[1] + 0.3 * Z[:, [2]]
    W = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]])
    hats.append(Z[:, [0]] + Z[:, [1]] + 0.1 * rng.standard_normal((300, 1)))
    perm = [3, 0, 2, 1]
    a = tmex_score(Z, hats, W=W, rng=5)
    b = tmex_score(Z, [hats[i] for i in perm], W=W[perm], rng=5)
    assert a.score == b.score
    assert np.array_equal(a.W_hat[perm], b.W_hat)
    assert np.array_equal(a.pvalues[perm], b.pvalues)


def test_determinism_same_rng_same_result():
    # check 11 (bootstrap included)
    rng = np.random.default_rng(2)
    Z = rng.standard_normal((200, 3))
    hats = measurement("mixed", Z) + [Z[:, :2] + 0.5 * rng.standard_normal((200, 2))]
    W = np.vstack([np.eye(3, dtype=int), [[1, 1, 0]]])
    first = tmex_score(Z, hats, W=W, rng=7)
    again = tmex_score(Z, hats, W=W, rng=np.random.default_rng(7))
    assert isinstance(first, TMEXResult) and first == again


def test_separates_perfect_from_mixed_and_uses_covariates():
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((500, 3))
    perfect = tmex_score(Z, measurement("perfect_linear", Z), rng=0)
    mixed = tmex_score(Z, measurement("mixed", Z), rng=0)
    assert perfect.score == 0 and mixed.score == 6 and mixed.W_hat.sum() == 9
    # a block measuring a covariate only: independent of every latent given it
    v = Z[:, 0] + rng.standard_normal(500)
    with_v = tmex_score(Z, [v + 0.01 * rng.standard_normal(500)], W=[[0, 0, 0]], covariates=v)
    assert with_v.score <= 1


def test_missing_W_when_blocks_and_latents_differ():
    Z = np.random.default_rng(4).standard_normal((30, 2))
    with pytest.raises(ValueError, match="'W'"):
        tmex_score(Z, Z[:, :1])
    with pytest.raises(ValueError, match="'W'"):
        tmex_score(Z, Z, W=[[1, 2], [0, 1]])
