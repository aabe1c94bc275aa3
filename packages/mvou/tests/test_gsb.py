"""mvOU-GSB: the closed-form Gaussian Schrödinger bridge."""

import pytest
import torch

from conftest import F64, randn, rotation
from mvou import GaussianSB, MvOU
from paperkit.testing import assert_close


def _spd(d, seed, scale=0.5):
    G = randn(d, d, seed=seed)
    return scale * (G @ G.T / d + 0.2 * torch.eye(d, dtype=F64))


@pytest.mark.parametrize("d", [2, 5])
def test_end_marginals_and_push_forward(d):
    ref = MvOU(rotation(d), randn(d, seed=9), 0.5)
    a, P0 = randn(d, seed=1), _spd(d, 2)
    b, P1 = randn(d, seed=3), _spd(d, 4)
    sb = GaussianSB(a, P0, b, P1, ref)
    for t, (mean, cov) in ((0.0, (a, P0)), (1.0, (b, P1))):
        m_t, c_t = sb.marginal(t)
        assert_close(m_t, mean, rtol=1e-10, atol=1e-10)
        assert_close(c_t, cov, rtol=1e-10, atol=1e-10)
    # mu1 = reference push-forward of mu0: the SB is the reference, coupling P0 Phi_1^T
    mu1 = ref.m + ref.phi1 @ (a - ref.m)
    push = GaussianSB(a, P0, mu1, ref.phi1 @ P0 @ ref.phi1.T + ref.cov1, ref)
    assert_close(push.cross_cov, P0 @ ref.phi1.T, rtol=1e-10, atol=1e-12)
    t = torch.tensor([0.3, 0.7], dtype=F64)
    m_t, c_t = push.marginal(t)
    phi, cov = ref.phi(t), ref.cov(t)
    assert_close(m_t, ref.m + (phi @ (a - ref.m)[:, None])[..., 0], rtol=1e-10, atol=1e-10)
    assert_close(c_t, phi @ P0 @ phi.transpose(1, 2) + cov, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("d", [2, 5])
def test_coupling_satisfies_the_entropic_optimality_condition(d):
    # pi* ∝ exp(-c) mu0 ⊗ mu1 with c quadratic: the joint precision's cross block is
    # exactly the cost's, -Phi_1^T Sigma_1^{-1} (the marginal potentials add no cross term)
    ref = MvOU(rotation(d, 1), None, 0.5)
    P0, P1 = _spd(d, 5), _spd(d, 6, scale=2.0)
    sb = GaussianSB(randn(d, seed=7), P0, randn(d, seed=8), P1, ref)
    C = sb.cross_cov
    joint = torch.cat([torch.cat([P0, C], 1), torch.cat([C.T, P1], 1)])
    assert float(torch.linalg.eigvalsh(joint).min()) > 0
    prec = torch.linalg.inv(joint)
    assert_close(prec[:d, d:], -ref.phi1.T @ ref.cov1_inv, rtol=1e-9, atol=1e-9)


def test_drift_transports_the_marginals():
    # affine drift f = W x + c: d mean/dt = f(mean), d Cov/dt = W Cov + Cov W^T + D
    d = 3
    ref = MvOU(rotation(d, 2), randn(d, seed=1), 0.6)
    sb = GaussianSB(randn(d, seed=2), _spd(d, 3), randn(d, seed=4), _spd(d, 5), ref)
    h = 1e-5
    for t in (0.2, 0.5, 0.8):
        mean, cov = sb.marginal(t)
        (mp, cp), (mm, cm) = sb.marginal(t + h), sb.marginal(t - h)
        f = sb.drift(t, mean[None])[0]
        assert_close(f, (mp - mm) / (2 * h), rtol=1e-5, atol=1e-5)
        W = torch.autograd.functional.jacobian(lambda x, t=t: sb.drift(t, x[None])[0], mean)
        assert_close(W @ cov + cov @ W.T + ref.D, (cp - cm) / (2 * h), rtol=1e-5, atol=1e-5)


@pytest.mark.slow  # 400 Euler-Maruyama steps of 20 000 paths
def test_sample_follows_the_marginals():
    d, n = 2, 20_000
    ref = MvOU(rotation(d), None, 0.5)
    a, P0, P1 = randn(d, seed=1), _spd(d, 2), _spd(d, 3)
    sb = GaussianSB(a, P0, torch.zeros(d, dtype=F64), P1, ref)
    g = torch.Generator().manual_seed(0)
    x0 = a + torch.randn(n, d, generator=g, dtype=F64) @ torch.linalg.cholesky(P0).T
    paths = sb.sample(x0, torch.tensor([0.0, 0.5, 1.0], dtype=F64), steps=400, generator=g)
    for k, t in ((1, 0.5), (2, 1.0)):
        mean, cov = sb.marginal(t)
        # Euler-Maruyama bias O(dt) plus sampling error: 0.03 on entries of size ~0.5
        assert float((paths[:, k].mean(0) - mean).abs().max()) < 0.03
        assert float((torch.cov(paths[:, k].T) - cov).abs().max()) < 0.03


def test_drift_propagates_the_coupling():
    # The SB is Gauss-Markov with the affine drift f_s = W_s x + c_s, so X_1 = Psi(1, t) X_t +
    # independent noise with dPsi/ds = W_s Psi: Cov(X_1, X_t) = Psi(1, t) Cov(X_t). This pins
    # the drift down (transporting the marginals alone leaves W + K Cov^{-1}, K skew, free).
    from scipy.integrate import solve_ivp

    d = 3
    ref = MvOU(rotation(d, 3), randn(d, seed=5), 0.7)
    sb = GaussianSB(randn(d, seed=6), _spd(d, 7), randn(d, seed=8), _spd(d, 9, scale=1.5), ref)
    basis = torch.cat([torch.zeros(1, d, dtype=F64), torch.eye(d, dtype=F64)])

    def rhs(s, psi):
        f = sb.drift(min(s, 1 - 1e-12), basis)
        W = (f[1:] - f[0]).T
        return (W @ torch.from_numpy(psi).reshape(d, d)).reshape(-1).numpy()

    t = 0.4
    psi = solve_ivp(
        rhs, (t, 1.0), torch.eye(d, dtype=F64).reshape(-1).numpy(), rtol=1e-10, atol=1e-12
    ).y[:, -1]
    cross = sb._moments(torch.tensor([t], dtype=F64))["cross"][0]  # Cov(X_t, X_1)
    _, cov_t = sb.marginal(t)
    assert_close(torch.from_numpy(psi).reshape(d, d) @ cov_t, cross.T, rtol=1e-6, atol=1e-7)
