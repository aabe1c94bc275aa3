import numpy as np
import torch

from vud import BernoulliArmsPrior, LinearGaussianPrior, LogisticPrior


def test_arms_aleatoric_equals_monte_carlo():
    prior = BernoulliArmsPrior(2)
    cx = torch.eye(2, dtype=torch.float64)[[0, 0, 0, 1]]
    cy = torch.tensor([[1.0, 1.0, 0.0, 0.0]], dtype=torch.float64)
    U, Ua, Ue = prior.true_decomposition(cx[None], cy, torch.eye(2, dtype=torch.float64)[None])
    # reference: Monte Carlo over the Beta(3, 2) and Beta(1, 2) posteriors
    rng = np.random.default_rng(0)
    for arm, (a, b) in enumerate([(3, 2), (1, 2)]):
        p = rng.beta(a, b, size=2_000_000)
        mc = np.mean(-(p * np.log(p) + (1 - p) * np.log(1 - p)))
        assert abs(float(Ua[0, arm]) - mc) < 2e-3
    assert (Ue > 0).all()


def test_logistic_grid_posterior_matches_importance_sampling():
    prior = LogisticPrior()
    cx = torch.tensor([[[-1.0], [0.5], [2.0]]], dtype=torch.float64)
    cy = torch.tensor([[0.0, 1.0, 1.0]], dtype=torch.float64)
    qx = torch.tensor([[[0.0], [2.5]]], dtype=torch.float64)
    p = prior.predictive(cx, cy, qx)[0, :, 1].numpy()
    # reference: self-normalised importance sampling from the continuous N(0, 2²) prior
    rng = np.random.default_rng(1)
    w, b = rng.normal(0, 2, 400_000), rng.normal(0, 2, 400_000)
    lik = np.ones_like(w)
    for x, y in zip(cx[0, :, 0].numpy(), cy[0].numpy(), strict=True):
        s = 1 / (1 + np.exp(-(w * x + b)))
        lik *= s if y else 1 - s
    for i, x in enumerate(qx[0, :, 0].numpy()):
        ref = np.sum(lik / (1 + np.exp(-(w * x + b)))) / lik.sum()
        assert abs(p[i] - ref) < 5e-3


def test_nig_predictive_matches_sampling():
    prior = LinearGaussianPrior()
    cx, cy, qx, _ = prior.sample_tasks(1, 6, 1, torch.Generator().manual_seed(0))
    mean, var = prior.predictive(cx.double(), cy.double(), qx.double())
    mu, cov, a_n, b_n = prior.posterior(cx.double(), cy.double())
    # reference: ancestral sampling sigma² ~ IG(a_n, b_n), w ~ N(mu, sigma² cov),
    # y ~ N(phi w, sigma²)
    rng = np.random.default_rng(2)
    s2 = 1 / rng.gamma(float(a_n[0]), 1 / float(b_n[0]), size=400_000)
    L = np.linalg.cholesky(cov[0].numpy())
    w = mu[0].numpy() + np.sqrt(s2)[:, None] * (rng.standard_normal((len(s2), 2)) @ L.T)
    phi = LinearGaussianPrior.features(qx.double())[0, 0].numpy()
    y = w @ phi + np.sqrt(s2) * rng.standard_normal(len(s2))
    assert abs(float(mean) - y.mean()) < 0.02 * np.sqrt(float(var)) + 5e-3
    assert abs(float(var) / y.var() - 1) < 0.03
