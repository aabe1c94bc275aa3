"""The SVGP head (paper Sec. 3, GP detection head) against the exact GP posterior, the KL
against torch.distributions, gradcheck, and gpytorch's whitened variational strategy."""

import math

import numpy as np
import pytest
import torch
from torch.distributions import MultivariateNormal, kl_divergence

from paperkit.testing import assert_close, gradcheck64
from zrdetr.gp_head import SVGPHead, gaussian_nll


def _rbf(a, b, ls, sf):
    d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return sf**2 * np.exp(-0.5 * d2 / ls**2)


def _head_at_exact_posterior(jitter):
    """A 1-output head whose inducing inputs are 8 training inputs and whose q(u) is the exact
    posterior over u = f(Z) (so the SVGP predictive is the exact GP predictive)."""
    rng = np.random.default_rng(0)
    p, M = 3, 8
    X = rng.normal(size=(M, p))
    y = np.sin(X.sum(1))
    ls, sf, sn = 1.3, 0.9, 0.2
    head = SVGPHead(4, 1, n_inducing=M, feat_dim=p, jitter=jitter).double()
    K = _rbf(X, X, ls, sf)
    A = K + sn**2 * np.eye(M)
    mu_u = K @ np.linalg.solve(A, y)
    cov_u = K - K @ np.linalg.solve(A, K)
    Lzz = np.linalg.cholesky(K + (jitter or 0.0) * np.eye(M))
    m = np.linalg.solve(Lzz, mu_u)
    S = np.linalg.solve(Lzz, np.linalg.solve(Lzz, cov_u).T)  # L^-1 cov L^-T
    L = np.linalg.cholesky(S + 1e-13 * np.eye(M))
    with torch.no_grad():
        head.inducing.copy_(torch.as_tensor(X))
        head.log_lengthscale.fill_(math.log(ls))
        head.log_outputscale.fill_(math.log(sf))
        head.log_noise.fill_(math.log(sn))
        head.variational_mean.copy_(torch.as_tensor(m)[None])
        head.variational_chol.copy_(torch.as_tensor(L)[None])
    return head, X, y, (ls, sf, sn)


@pytest.mark.parametrize("jitter", [1e-10, 0.0])
def test_svgp_equals_exact_gp_posterior_float64(jitter):
    head, X, y, (ls, sf, sn) = _head_at_exact_posterior(jitter)
    Xs = np.random.default_rng(1).normal(size=(5, X.shape[1]))
    mean, var = head.predict_features(torch.as_tensor(Xs))
    # closed form (Rasmussen & Williams eq. 2.25-2.26), plus the noise of a new observation
    A = _rbf(X, X, ls, sf) + sn**2 * np.eye(len(X))
    Ks = _rbf(Xs, X, ls, sf)
    exact_mean = Ks @ np.linalg.solve(A, y)
    exact_var = sf**2 - np.einsum("ij,ji->i", Ks, np.linalg.solve(A, Ks.T)) + sn**2
    assert_close(mean[:, 0], exact_mean, rtol=1e-8, atol=1e-8)
    assert_close(var[:, 0], exact_var, rtol=1e-8, atol=1e-8)


def test_default_jitter_depends_on_dtype():
    head = SVGPHead(4, 2)
    assert head._jitter(torch.float32) == 1e-4
    assert head._jitter(torch.float64) == 1e-10


def test_kl_matches_torch_distributions():
    torch.manual_seed(0)
    head = SVGPHead(4, 3, n_inducing=6, feat_dim=2).double()
    with torch.no_grad():
        head.variational_mean.normal_()
        head.variational_chol.copy_(torch.tril(torch.randn(3, 6, 6, dtype=torch.float64)))
        head.variational_chol.diagonal(dim1=-2, dim2=-1).abs_().add_(0.5)
    L = torch.tril(head.variational_chol)
    q = MultivariateNormal(head.variational_mean, scale_tril=L)
    prior = MultivariateNormal(
        torch.zeros(3, 6, dtype=torch.float64),
        scale_tril=torch.eye(6, dtype=torch.float64).expand(3, 6, 6),
    )
    assert_close(head.kl(), kl_divergence(q, prior).sum(), rtol=1e-10, atol=1e-12)


def test_gradcheck_mean_and_var_and_positive_variance():
    torch.manual_seed(0)
    head = SVGPHead(5, 2, n_inducing=4, feat_dim=3).double()
    with torch.no_grad():
        head.variational_chol.mul_(0.3)
        head.log_noise.fill_(-20.0)  # variance would be ~0 without the clamp: still > 0 below
    h = torch.randn(2, 3, 5, dtype=torch.float64, requires_grad=True)
    gradcheck64(lambda x: head(x)[0], h)
    gradcheck64(lambda x: head(x)[1], h)
    far = 100 * torch.randn(4, 6, 5, dtype=torch.float64)
    for x in (h.detach(), far, torch.zeros(1, 1, 5, dtype=torch.float64)):
        assert (head(x)[1] > 0).all()


def test_gaussian_nll_closed_form():
    mean, var, t = torch.tensor([0.0, 1.0]), torch.tensor([1.0, 4.0]), torch.tensor([1.0, 1.0])
    expected = 0.5 * ((math.log(2 * math.pi) + 1) + math.log(2 * math.pi * 4)) / 2
    assert_close(gaussian_nll(mean, var, t), expected, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="'var'"):
        gaussian_nll(mean, torch.tensor([1.0, 0.0]), t)


def test_matches_gpytorch_whitened_variational_strategy():
    gpytorch = pytest.importorskip("gpytorch")
    torch.manual_seed(0)
    M, p, jitter = 7, 3, 1e-6
    head = SVGPHead(4, 1, n_inducing=M, feat_dim=p, jitter=jitter).double()
    with torch.no_grad():
        head.variational_mean.normal_()
        head.variational_chol.copy_(torch.tril(0.3 * torch.randn(1, M, M, dtype=torch.float64)))
        head.variational_chol.diagonal(dim1=-2, dim2=-1).abs_().add_(0.2)
        head.log_lengthscale.fill_(0.4)
        head.log_outputscale.fill_(-0.2)

    class GP(gpytorch.models.ApproximateGP):
        def __init__(self):
            dist = gpytorch.variational.CholeskyVariationalDistribution(M)
            strat = gpytorch.variational.VariationalStrategy(
                self,
                head.inducing.detach().clone(),
                dist,
                learn_inducing_locations=False,
                jitter_val=jitter,
            )
            super().__init__(strat)
            self.mean_module = gpytorch.means.ZeroMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(
                self.mean_module(x), self.covar_module(x)
            )

    gp = GP().double()
    with torch.no_grad():
        gp.covar_module.base_kernel.lengthscale = head.log_lengthscale.exp()
        gp.covar_module.outputscale = head.log_outputscale.exp() ** 2
        gp.variational_strategy.variational_params_initialized.fill_(1)  # keep ours below
        dist = gp.variational_strategy._variational_distribution
        dist.variational_mean.copy_(head.variational_mean[0])
        dist.chol_variational_covar.copy_(torch.tril(head.variational_chol[0]))
    x = torch.randn(6, p, dtype=torch.float64)
    gp.eval()
    with torch.no_grad(), gpytorch.settings.fast_pred_var(False):
        f = gp(x)
        ref_mean, ref_var = f.mean, f.variance
        ours_mean, ours_var = head.predict_features(x)
    noise = head.log_noise.exp() ** 2
    assert_close(ours_mean[:, 0], ref_mean, rtol=1e-8, atol=1e-9)
    # gpytorch also adds its jitter to k(x, x) in the predictive covariance; we do not
    assert_close(ours_var[:, 0] - noise + jitter, ref_var, rtol=1e-8, atol=1e-9)
    prior_kl = gp.variational_strategy.kl_divergence()
    assert_close(head.kl(), prior_kl, rtol=1e-8, atol=1e-9)


def test_inference_cache_matches_the_autograd_path_and_follows_parameter_updates():
    torch.manual_seed(0)
    head = SVGPHead(8, 3, n_inducing=5, feat_dim=4).double().eval()
    with torch.no_grad():
        head.variational_mean.normal_()
        head.variational_chol.mul_(0.5)
    h = torch.randn(2, 4, 8, dtype=torch.float64)
    fresh_mean, fresh_var = head(h)  # autograd on: computed from the parameters, not cached
    with torch.no_grad():
        for _ in range(2):  # the second call reuses the cached constants
            mean, var = head(h)
            assert_close(mean, fresh_mean.detach(), rtol=1e-12, atol=1e-12)
            assert_close(var, fresh_var.detach(), rtol=1e-12, atol=1e-12)
        head.variational_mean.add_(1.0)  # an optimizer-style in-place update
        head.log_lengthscale.add_(0.3)
        moved_mean, moved_var = head(h)
    want_mean, want_var = head(h)
    assert (moved_mean - mean).abs().max() > 1e-3
    assert_close(moved_mean, want_mean.detach(), rtol=1e-12, atol=1e-12)
    assert_close(moved_var, want_var.detach(), rtol=1e-12, atol=1e-12)
