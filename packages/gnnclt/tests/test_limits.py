"""Limit formulas: closed forms, relabelling invariance, and the simulated CLT (means,
covariances, W1) at the reproduction's setting."""

import numpy as np
import pytest

from gnnclt import (
    CSBMParams,
    collapse_ratio,
    limit_covariances,
    limit_means,
    limit_mixture,
    poly_gnn_embed,
    predicted_collapse,
    sample_csbm,
    spectral_gap_ratio,
)


def test_means_closed_forms(csbm):
    """Spec check 4: k = 1 gives M U; K = 1 gives b^k mu exactly."""
    assert np.allclose(limit_means(csbm, 1), (csbm.B * csbm.pi) @ csbm.U, rtol=0, atol=1e-14)
    one = CSBMParams([1.0], [[2.5]], [[1.0, -2.0]], np.eye(2))
    for k in (1, 2, 3, 5):
        assert np.array_equal(limit_means(one, k), 2.5**k * one.U)


def test_covariances_closed_forms():
    one = CSBMParams([1.0], [[2.0]], [[1.0, 0.0]], 0.5 * np.eye(2))
    G1 = limit_covariances(one, 1)[0]
    assert np.allclose(G1, 2.0 * (np.outer([1, 0], [1, 0]) + 0.5 * np.eye(2)))
    G3 = limit_covariances(one, 3)[0]  # 2 * (4 mu)(4 mu)^T: feature noise gone for k >= 2
    assert np.allclose(G3, 2.0 * 16.0 * np.outer([1, 0], [1, 0]))


def test_spectral_ratio_of_the_default_csbm(csbm):
    assert abs(spectral_gap_ratio(csbm) - 0.400) < 1e-3
    assert predicted_collapse(csbm, 3) == pytest.approx(spectral_gap_ratio(csbm) ** 3)


def test_relabelling_invariance(csbm):
    """Spec check 9: permuting communities permutes every limit."""
    perm = [2, 0, 1]
    q = csbm.permuted(perm)
    for k in (1, 2, 3):
        assert np.allclose(limit_means(q, k), limit_means(csbm, k)[perm])
        assert np.allclose(limit_covariances(q, k), limit_covariances(csbm, k)[perm])
        assert collapse_ratio(limit_means(q, k)) == pytest.approx(
            collapse_ratio(limit_means(csbm, k))
        )
    assert spectral_gap_ratio(q) == pytest.approx(spectral_gap_ratio(csbm))


def test_mixture_sampling_and_bayes(csbm):
    mix = limit_mixture(csbm, 2, nu=50.0, centered=False)
    Y, z = mix.sample(40_000, np.random.default_rng(0))
    for c in range(3):
        assert np.allclose(Y[z == c].mean(0), limit_means(csbm, 2)[c], atol=0.03)
        assert np.allclose(
            np.cov(Y[z == c].T), limit_covariances(csbm, 2)[c] / 50.0, rtol=0.1, atol=1e-3
        )
    Y1, z1 = mix.sample(100, 3)
    Y2, z2 = mix.sample(100, 3)
    assert np.array_equal(Y1, Y2) and np.array_equal(z1, z2)
    assert 0.9 < mix.bayes_accuracy(5000, 0) <= 1.0
    centred = limit_mixture(csbm, 2)
    assert not centred.means.any() and np.allclose(centred.covs, limit_covariances(csbm, 2))


def test_collapse_ratio_geometric(csbm):
    """The collapse of M^k U decays like (|l2|/l1)^k: successive ratio -> 0.400 (5 %)."""
    c = [collapse_ratio(limit_means(csbm, k)) for k in range(1, 11)]
    assert (np.diff(c) < 0).all()
    assert c[-1] / c[-2] == pytest.approx(spectral_gap_ratio(csbm), rel=0.05)
    assert collapse_ratio([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]) == pytest.approx(0.0, abs=1e-12)


def _class_means(csbm, n, nu, k, seed):
    A, X, z = sample_csbm(csbm, n, nu, seed=seed)
    h = poly_gnn_embed(A, X, [0.0] * k + [1.0]) / nu**k
    hbar = np.array([h[z == c].mean(0) for c in range(csbm.K)])
    return h, z, hbar, csbm.with_pi(np.bincount(z, minlength=csbm.K) / n)


@pytest.mark.parametrize(("k", "nu"), [(1, 50.0), (2, 100.0)])
def test_mean_clt(csbm, k, nu):
    """Spec check 5: at n = 20k, max_c |hbar_c - mhat_c| <= 5% of max_c |mhat_c| (mhat = M^k U
    at the realised proportions)."""
    _, _, hbar, p_hat = _class_means(csbm, 20_000, nu, k, seed=11)
    m = limit_means(p_hat, k)
    assert np.linalg.norm(hbar - m, axis=1).max() <= 0.05 * np.linalg.norm(m, axis=1).max()


def test_covariance_clt_k1(csbm):
    """Spec check 6: class covariances of sqrt(nu)(h - hbar_c) within 10% (Frobenius) of Gamma."""
    nu = 50.0
    h, z, hbar, p_hat = _class_means(csbm, 20_000, nu, 1, seed=12)
    G = limit_covariances(p_hat, 1)
    for c in range(3):
        C = np.cov((np.sqrt(nu) * (h[z == c] - hbar[c])).T)
        assert np.linalg.norm(C - G[c]) <= 0.10 * np.linalg.norm(G[c])
