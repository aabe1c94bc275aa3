"""The mvOU reference: Van Loan covariance, transition law, bridges and their targets."""

import math

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.stats
import torch

from conftest import F64, randn, rotation
from mvou import MvOU, sb_cost_matrix
from paperkit.testing import assert_close, assert_param_error


def _general(d=3, seed=0):
    """An asymmetric A, a non-zero m and a full PSD sigma."""
    A = rotation(d, seed) + 0.3 * randn(d, d, seed=seed + 1)
    S = randn(d, d, seed=seed + 2)
    sigma = scipy.linalg.sqrtm((S @ S.T + 0.5 * torch.eye(d, dtype=F64)).numpy()).real
    sigma = 0.5 * (sigma + sigma.T)
    return MvOU(A, randn(d, seed=seed + 3), torch.from_numpy(sigma))


def test_van_loan_covariance_solves_the_lyapunov_ode():
    # reference: solve_ivp of dSigma/dt = A Sigma + Sigma A^T + D, Sigma_0 = 0 (rtol 1e-10)
    ref = _general()
    A, D, d = ref.A.numpy(), ref.D.numpy(), ref.d
    t_eval = [0.1, 0.5, 1.0]
    sol = scipy.integrate.solve_ivp(
        lambda t, s: (A @ s.reshape(d, d) + s.reshape(d, d) @ A.T + D).ravel(),
        (0, 1),
        np.zeros(d * d),
        t_eval=t_eval,
        rtol=1e-10,
        atol=1e-12,
        method="DOP853",
    )
    ours = ref.cov(torch.tensor(t_eval, dtype=F64)).numpy()
    assert_close(ours, sol.y.T.reshape(-1, d, d), rtol=1e-8, atol=1e-10)


def test_scalar_ou_closed_form_and_brownian():
    # closed form: sigma^2 (e^{2at} - 1) / (2a) for dX = a X dt + sigma dB; A = 0 gives D t
    a, s = -0.7, 0.8
    ref = MvOU(torch.tensor([[a]], dtype=F64), sigma=s)
    t = torch.tensor([0.0, 0.3, 1.0], dtype=F64)
    assert_close(
        ref.cov(t)[:, 0, 0], s**2 * (torch.exp(2 * a * t) - 1) / (2 * a), rtol=1e-12, atol=1e-15
    )
    assert_close(ref.phi(t)[:, 0, 0], torch.exp(a * t), rtol=1e-12, atol=0)
    brown = MvOU(torch.zeros(2, 2), sigma=torch.tensor([0.5, 2.0]))
    assert_close(
        brown.cov(t),
        t[:, None, None] * torch.diag(torch.tensor([0.25, 4.0], dtype=F64)),
        rtol=1e-12,
        atol=1e-15,
    )


def test_stationary_covariance_matches_lyapunov():
    # stable A: Sigma_t -> Sigma_inf solving A S + S A^T + D = 0 (scipy); t = 15 via rescaling
    # (Van Loan multiplies e^{-tA^T}-sized blocks: at t = 15 about 8 digits remain)
    ref = _general()
    decay = -float(torch.linalg.eigvals(ref.A).real.max())
    assert decay > 0.5  # so Sigma_15 is within e^{-2 * 0.5 * 15} ~ 3e-7 of Sigma_inf
    far = ref.scaled(15.0).cov(1.0)[0]
    target = scipy.linalg.solve_continuous_lyapunov(ref.A.numpy(), -ref.D.numpy())
    assert_close(far, target, rtol=1e-5, atol=1e-6)


def test_cached_grid_agrees_with_matrix_exp():
    ref = _general()
    t = torch.rand(64, generator=torch.Generator().manual_seed(0), dtype=F64)
    # linear interpolation on a 1e-3 grid: error <= h^2 max|Sigma''| / 8 with
    # Sigma'' = A Sigma' + Sigma' A^T, |A| ~ 3.5, |Sigma'| ~ 4 here: about 4e-6
    assert_close(ref.cov(t, exact=False), ref.cov(t), rtol=0, atol=5e-6)
    assert_close(ref.phi(t, exact=False), ref.phi(t), rtol=0, atol=1e-5)


def test_transition_logpdf_and_cost_match_scipy():
    ref = _general()
    x0, x1 = randn(5, 3, seed=10), randn(5, 3, seed=11)
    t = torch.tensor([0.2, 0.4, 0.6, 0.8, 1.0], dtype=F64)
    ours = ref.transition_logpdf(x0, x1, t)
    phi, cov = ref.phi(t), ref.cov(t)
    for i in range(5):
        mean = ref.m + phi[i] @ (x0[i] - ref.m)
        want = scipy.stats.multivariate_normal(mean.numpy(), cov[i].numpy()).logpdf(x1[i].numpy())
        assert abs(float(ours[i]) - want) < 1e-10
    # cost = -log p_1(x1 | x0) + const: the difference is the same for every pair
    C = sb_cost_matrix(x0, x1, ref)
    logp = torch.stack([ref.transition_logpdf(x0, x1[j].expand(5, 3), 1.0) for j in range(5)], 1)
    diff = C + logp
    assert float(diff.max() - diff.min()) < 1e-10
    const = -0.5 * torch.logdet(2 * math.pi * ref.cov1)  # log p = -c - log det(2 pi S) / 2
    assert abs(float(diff.mean()) - float(const)) < 1e-10


def test_bridge_end_points():
    ref = _general()
    x0, x1 = randn(4, 3, seed=1), randn(4, 3, seed=2)
    for t, pin in ((0.0, x0), (1.0, x1)):
        M, S = ref.bridge(t, x0, x1)
        assert_close(M, pin, rtol=0, atol=1e-12)
        assert float(S.abs().max()) < 1e-12
    for t, pin in ((1e-6, x0), (1 - 1e-6, x1)):
        M, S = ref.bridge(t, x0, x1)
        assert float((M - pin).abs().max()) < 1e-4 and float(S.abs().max()) < 1e-5


def test_bridge_consistency_reproduces_the_transition_law():
    # x1 ~ p_1(.|x0), x_t ~ bridge(x0, x1)  =>  x_t ~ N(mu_t(x0), Sigma_t); 4 standard errors
    ref, n, t = _general(), 100_000, 0.37
    g = torch.Generator().manual_seed(0)
    x0 = torch.tensor([[0.5, -1.0, 2.0]], dtype=F64).expand(n, 3)
    x1 = ref.simulate(x0, torch.tensor([0.0, 1.0], dtype=F64), generator=g)[:, 1]
    eps = torch.randn(n, 3, generator=g, dtype=F64)
    M, S = ref.bridge(t, x0, x1)
    xt = M + (torch.linalg.cholesky(S + 1e-14 * torch.eye(3, dtype=F64)) @ eps[..., None])[..., 0]
    mean = ref.m + ref.phi(t)[0] @ (x0[0] - ref.m)
    cov = ref.cov(t)[0]
    se_mean = (cov.diagonal() / n).sqrt()
    assert bool(((xt.mean(0) - mean).abs() <= 4 * se_mean).all())
    emp = torch.cov(xt.T)
    se_cov = ((cov.diagonal()[:, None] * cov.diagonal()[None, :] + cov**2) / n).sqrt()
    assert bool(((emp - cov).abs() <= 4 * se_cov).all())


def test_score_target_is_the_gradient_of_the_bridge_log_density():
    ref = _general()
    t = torch.tensor([0.1, 0.5, 0.9], dtype=F64)
    x0, x1, eps = randn(3, 3, seed=4), randn(3, 3, seed=5), randn(3, 3, seed=6)
    x_t, _, score = ref.bridge_targets(t, x0, x1, eps)
    M, S = ref.bridge(t, x0, x1)
    x = x_t.clone().requires_grad_(True)
    logp = torch.distributions.MultivariateNormal(M, covariance_matrix=S).log_prob(x).sum()
    (grad,) = torch.autograd.grad(logp, x)
    assert_close(score, grad, rtol=1e-10, atol=1e-10)


def test_velocity_target_solves_the_gaussian_continuity_equation():
    # d/dt M_t = v_t(M_t) and d/dt S_t = W S_t + S_t W^T, W = dv/dx (central differences in t)
    ref = _general()
    x0, x1 = randn(1, 3, seed=7), randn(1, 3, seed=8)
    h = 1e-5
    for t in (0.2, 0.5, 0.8):
        (Mp, Sp), (Mm, Sm) = ref.bridge(t + h, x0, x1), ref.bridge(t - h, x0, x1)
        M, S = ref.bridge(t, x0, x1)
        L = torch.linalg.cholesky(S)

        def v_at(x, t=t, M=M, L=L):
            eps = torch.linalg.solve_triangular(L, (x - M)[..., None], upper=False)[..., 0]
            return ref.bridge_targets(t, x0.expand(len(x), 3), x1.expand(len(x), 3), eps)[1]

        v_mean = v_at(M)
        assert_close(v_mean, (Mp - Mm) / (2 * h), rtol=1e-5, atol=1e-5)
        W = torch.autograd.functional.jacobian(lambda x: v_at(x[None])[0], M[0])
        assert_close(W @ S[0] + S[0] @ W.T, (Sp - Sm)[0] / (2 * h), rtol=1e-5, atol=1e-5)


def test_brownian_reference_gives_brownian_bridge_targets():
    # A = 0: M_t = (1 - t) x0 + t x1, S_t = t (1 - t) D, u = (x1 - x) / (1 - t)
    ref = MvOU(torch.zeros(2, 2), sigma=0.7)
    t = torch.tensor([0.2, 0.6], dtype=F64)
    x0, x1, x = randn(2, 2, seed=1), randn(2, 2, seed=2), randn(2, 2, seed=3)
    M, S = ref.bridge(t, x0, x1)
    assert_close(M, (1 - t[:, None]) * x0 + t[:, None] * x1, rtol=1e-12, atol=1e-12)
    assert_close(
        S, (t * (1 - t) * 0.49)[:, None, None] * torch.eye(2, dtype=F64), rtol=1e-10, atol=1e-14
    )
    assert_close(ref.bridge_drift(t, x, x1), (x1 - x) / (1 - t[:, None]), rtol=1e-10, atol=1e-12)


def test_simulate_is_exact_in_distribution():
    ref, n = _general(), 20_000
    g = torch.Generator().manual_seed(3)
    x0 = torch.zeros(n, 3, dtype=F64)
    paths = ref.simulate(x0, torch.tensor([0.0, 0.3, 0.6, 1.0], dtype=F64), generator=g)
    cov = ref.cov(1.0)[0]
    emp = torch.cov(paths[:, -1].T)
    se = ((cov.diagonal()[:, None] * cov.diagonal()[None, :] + cov**2) / n).sqrt()
    assert bool(((emp - cov).abs() <= 4 * se).all())
    assert_close(paths[:, 0], x0, rtol=0, atol=0)


def test_argument_errors_name_the_argument():
    A = rotation(2)
    assert_param_error(MvOU, torch.zeros(2, 3), param="A")  # non-square
    assert_param_error(MvOU, A, torch.zeros(3), param="m")  # d mismatch
    assert_param_error(MvOU, A, None, torch.tensor([[1.0, 0.0], [0.0, -1.0]]), param="sigma")
    assert_param_error(MvOU, A, None, torch.tensor([[1.0, 2.0], [0.0, 1.0]]), param="sigma")
    ref = MvOU(A)
    x = torch.zeros(2, 2)
    assert_param_error(ref.bridge, 1.5, x, x, param="t")
    assert_param_error(ref.bridge, torch.tensor([-0.1, 0.5]), x, x, param="t")
    assert_param_error(ref.bridge, 0.5, x, torch.zeros(2, 3), param="x1")
    assert_param_error(ref.simulate, x, torch.tensor([0.0, 0.5, 0.4]), param="t_grid")
    with pytest.raises(ValueError, match="'t'"):
        ref.bridge_targets(1.0, x, x, x)  # the pinned end has no score
