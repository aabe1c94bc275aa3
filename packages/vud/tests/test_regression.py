"""Conjugate regression with known noise σ: E_u Var[y*|D,(z,u)] = σ² + φ*ᵀ S_{n+1} φ* (the
posterior covariance after one more point does not depend on its label), and the law of total
variance, Var[y*|D] = E_u Var[y*|D,u] + Var_u E[y*|D,u], with
Var_u E[y*|D,u] = (φ*ᵀ S_n φ_z)² / (σ² + φ_zᵀ S_n φ_z) (Gaussian conditioning)."""

import torch

from vud import BayesOracleICL, LinearGaussianPrior, decompose, probe_bound

SIGMA = 0.5


def _setup(seed=0):
    prior = LinearGaussianPrior(known_noise=SIGMA)
    cx, cy, qx, _ = prior.sample_tasks(1, 7, 2, torch.Generator().manual_seed(seed))
    return prior, cx[0].double(), cy[0].double(), qx[0, 0].double(), qx[0, 1].double()


def test_expected_variance_closed_form():
    prior, cx, cy, xs, z = _setup()
    bound = probe_bound(BayesOracleICL(prior), cx, cy, xs, z[None, None], 1)
    phi = LinearGaussianPrior.features
    aug = torch.cat([cx, z[None]])
    S = SIGMA**2 * torch.linalg.inv(
        prior.lam * torch.eye(2, dtype=torch.float64) + phi(aug).T @ phi(aug)
    )
    f = phi(xs[None])[0]
    assert abs(float(bound.va_var[0]) - (SIGMA**2 + f @ S @ f)) < 1e-8


def test_law_of_total_variance():
    prior, cx, cy, xs, z = _setup(seed=1)
    result = decompose(BayesOracleICL(prior), cx, cy, xs, num_permutations=1, measure="variance")
    assert abs(result.aleatoric + result.epistemic - result.total) < 1e-12
    phi = LinearGaussianPrior.features
    S_n = SIGMA**2 * torch.linalg.inv(
        prior.lam * torch.eye(2, dtype=torch.float64) + phi(cx).T @ phi(cx)
    )
    f = phi(xs[None])[0]
    for zz in result.candidates["z"][:, 0]:
        g = phi(torch.from_numpy(zz)[None])[0]
        explained = (f @ S_n @ g) ** 2 / (SIGMA**2 + g @ S_n @ g)
        bound = probe_bound(BayesOracleICL(prior), cx, cy, xs, torch.from_numpy(zz)[None, None], 1)
        assert abs(result.total - float(bound.va_var[0]) - float(explained)) < 1e-8


def test_true_decomposition_unknown_noise_is_consistent():
    prior = LinearGaussianPrior()
    cx, cy, qx, _ = prior.sample_tasks(4, 10, 3, torch.Generator().manual_seed(2))
    U, Ua, Ue = prior.true_decomposition(cx.double(), cy.double(), qx.double())
    assert (Ue > 0).all()  # mutual information of a non-degenerate posterior
    V, Va, Ve = prior.true_decomposition(cx.double(), cy.double(), qx.double(), measure="variance")
    assert (Ve > 0).all() and torch.allclose(Va + Ve, V)
