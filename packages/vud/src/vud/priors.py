r"""Task families with exact Bayesian posteriors: the ground truth VUD's bounds are checked against.

Each prior draws tasks (a latent :math:`\theta` and data from it), gives the exact posterior
predictive :math:`p(y^*|x^*,D)` (what :class:`vud.BayesOracleICL` returns and what a prior-fitted
transformer is trained to approximate) and the true decomposition of its entropy (paper eq. 2),

.. math:: H[p(y^*|x^*,D)] = \underbrace{E_{p(\theta|D)} H[p(y^*|x^*,\theta)]}_{U_a}
          + \underbrace{I(y^*;\theta|x^*,D)}_{U_e}.

- :class:`LogisticPrior`: :math:`w\sim N(0,\sigma_w^2 I)`, :math:`b\sim N(0,\sigma_b^2)`,
  :math:`y\sim\mathrm{Bern}(\sigma(w^\top x+b))`, :math:`x\sim U[-3,3]^d`; posterior by quadrature
  on a grid over :math:`\pm4` prior standard deviations (161x161 for d=1, 41^3 for d=2). The grid
  *is* the prior the oracle uses, so Bayes' rule holds exactly on it.
- :class:`LinearGaussianPrior`: Normal-Inverse-Gamma linear regression on :math:`\phi(x)=[x,1]`,
  :math:`\sigma^2\sim IG(a_0,b_0)`, :math:`w|\sigma^2\sim N(0,\sigma^2/\lambda\, I)`; Student-t
  predictive (conjugate closed form), or Gaussian with ``known_noise``.
- :class:`BernoulliArmsPrior`: one-hot arm :math:`x`, :math:`p_a\sim\mathrm{Beta}(1,1)`,
  :math:`y\sim\mathrm{Bern}(p_a)`; Beta posterior.

Shapes (all priors): ``ctx_x`` (B, n, d), ``ctx_y`` (B, n), queries (B, q, d); the predictive
is probabilities (B, q, C) for classification, ``(mean, var)`` each (B, q) for regression.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import numpy as np
import torch

from paperkit import check_choice, check_int, check_real
from vud.info import entropy_

__all__ = ["BernoulliArmsPrior", "LinearGaussianPrior", "LogisticPrior"]

Tasks = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


def _check_sizes(owner: str, batch: int, n_ctx: int, n_query: int) -> None:
    check_int("batch", owner, batch, low=1, high=1_000_000)
    check_int("n_ctx", owner, n_ctx, low=0, high=100_000)
    check_int("n_query", owner, n_query, low=1, high=100_000)


class _Prior:
    """Shared surface: ``task``, ``n_classes``, ``d_x`` and the three methods."""

    task: Literal["classification", "regression"]
    n_classes: int | None
    d_x: int

    def _check_query(self, owner: str, ctx_x, ctx_y, x, name: str = "query_x"):
        from vud.predictors import check_context

        return check_context(owner, ctx_x, ctx_y, x, self.task, self.n_classes, self.d_x, name)

    def sample_tasks(
        self, batch: int, n_ctx: int, n_query: int, generator: torch.Generator | None = None
    ) -> Tasks:
        """Draw ``batch`` tasks from the prior, each with ``n_ctx`` context pairs and ``n_query``
        query pairs from the same task: ``(ctx_x (B,n,d), ctx_y (B,n), qx (B,q,d), qy (B,q))``,
        float32. NaN policy: not applicable (sizes are integers, checked)."""
        _check_sizes(f"{type(self).__name__}.sample_tasks", batch, n_ctx, n_query)
        x, y = self._sample(batch, n_ctx + n_query, generator)
        return x[:, :n_ctx], y[:, :n_ctx], x[:, n_ctx:], y[:, n_ctx:]

    def predictive(self, ctx_x, ctx_y, query_x):
        """The exact posterior predictive at ``query_x`` (see the module docstring for shapes).
        Computed in the dtype of ``ctx_x``. NaN policy: NaN/inf inputs are refused."""
        ctx_x, ctx_y, query_x = self._check_query(
            f"{type(self).__name__}.predictive", ctx_x, ctx_y, query_x
        )
        return self._predictive(ctx_x, ctx_y, query_x)

    def true_decomposition(self, ctx_x, ctx_y, x_star, measure: str = "entropy"):
        r"""``(U, U_a, U_e)``, each (B, q): total, aleatoric :math:`E_{\theta|D}H[p(y|x,\theta)]`
        and epistemic :math:`I(y;\theta|x,D)` in nats (``measure="variance"``: the law of total
        variance, regression only). NaN policy: NaN/inf inputs are refused."""
        owner = f"{type(self).__name__}.true_decomposition"
        ctx_x, ctx_y, x_star = self._check_query(owner, ctx_x, ctx_y, x_star, "x_star")
        allowed = ("entropy", "variance") if self.task == "regression" else ("entropy",)
        check_choice("measure", owner, measure, allowed)
        total, aleatoric = self._decomposition(ctx_x, ctx_y, x_star, measure)
        return total, aleatoric, total - aleatoric


class LogisticPrior(_Prior):
    r"""Bayesian logistic regression, :math:`y\sim\mathrm{Bern}(\sigma(w^\top x+b))`, d in {1, 2}.

    >>> prior = LogisticPrior()
    >>> cx, cy, qx, qy = prior.sample_tasks(2, 5, 3, torch.Generator().manual_seed(0))
    >>> prior.predictive(cx, cy, qx).shape
    torch.Size([2, 3, 2])
    """

    task = "classification"
    n_classes = 2

    def __init__(self, d: int = 1, w_std: float = 2.0, b_std: float = 2.0) -> None:
        self.d_x = check_int("d", "LogisticPrior", d, low=1, high=2)
        self.w_std = check_real("w_std", "LogisticPrior", w_std, low=0, low_open=True)
        self.b_std = check_real("b_std", "LogisticPrior", b_std, low=0, low_open=True)

    def _sample(self, batch: int, n: int, g: torch.Generator | None):
        w = torch.randn(batch, self.d_x, generator=g) * self.w_std
        b = torch.randn(batch, 1, generator=g) * self.b_std
        x = torch.rand(batch, n, self.d_x, generator=g) * 6 - 3
        p = torch.sigmoid((x @ w[:, :, None])[..., 0] + b)
        return x, torch.bernoulli(p, generator=g)

    def grid(self, dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
        """The quadrature grid ``(theta (G, d+1): [w, b], log_prior (G,))`` (normalised)."""
        return _grid(self.d_x, self.w_std, self.b_std, dtype)

    def _log_posterior(self, ctx_x: torch.Tensor, ctx_y: torch.Tensor) -> torch.Tensor:
        """Log posterior weights (B, G). Stacked contexts share most points (permutations of one
        D plus probes), so the log-likelihood is computed once per distinct (x, y) pair and
        summed per context through a count matrix."""
        theta, log_prior = self.grid(ctx_x.dtype)
        B, n, d = ctx_x.shape
        if n == 0:
            return log_prior.expand(B, -1).clone()
        pairs = torch.cat([ctx_x, ctx_y.to(ctx_x.dtype)[..., None]], dim=-1).reshape(-1, d + 1)
        unique, inverse = torch.unique(pairs, dim=0, return_inverse=True)
        counts = torch.zeros(B, len(unique), dtype=ctx_x.dtype)
        counts.index_put_(
            (torch.arange(B).repeat_interleave(n), inverse),
            torch.ones(B * n, dtype=ctx_x.dtype),
            accumulate=True,
        )
        logits = unique[:, :d] @ theta[:, :-1].T + theta[:, -1]
        loglik = torch.nn.functional.logsigmoid((2 * unique[:, d:] - 1) * logits)  # (k, G)
        return torch.log_softmax(log_prior + counts @ loglik, dim=-1)

    def _likelihood(self, x: torch.Tensor) -> torch.Tensor:
        theta, _ = self.grid(x.dtype)
        return torch.sigmoid(x @ theta[:, :-1].T + theta[:, -1])  # (B, q, G)

    def _predictive(self, ctx_x, ctx_y, query_x):
        post = self._log_posterior(ctx_x, ctx_y).exp()
        p1 = torch.einsum("bg,bqg->bq", post, self._likelihood(query_x))
        return torch.stack([1 - p1, p1], dim=-1)

    def _decomposition(self, ctx_x, ctx_y, x_star, measure):
        post = self._log_posterior(ctx_x, ctx_y).exp()
        p1 = self._likelihood(x_star)
        per_theta = entropy_(torch.stack([1 - p1, p1], dim=-1))  # (B, q, G)
        aleatoric = torch.einsum("bg,bqg->bq", post, per_theta)
        total = entropy_(self._predictive(ctx_x, ctx_y, x_star))
        return total, aleatoric


@lru_cache(maxsize=8)
def _grid(d: int, w_std: float, b_std: float, dtype: torch.dtype):
    points = 161 if d == 1 else 41
    axes = [torch.linspace(-4, 4, points, dtype=dtype) * w_std for _ in range(d)]
    axes.append(torch.linspace(-4, 4, points, dtype=dtype) * b_std)
    theta = torch.cartesian_prod(*axes).reshape(-1, d + 1)
    stds = torch.tensor([w_std] * d + [b_std], dtype=dtype)
    log_prior = -0.5 * ((theta / stds) ** 2).sum(-1)
    return theta, torch.log_softmax(log_prior, dim=0)


class LinearGaussianPrior(_Prior):
    r"""Normal-Inverse-Gamma Bayesian linear regression on :math:`\phi(x) = [x, 1]`.

    Posterior (conjugate): :math:`\Lambda_n = \lambda I + \Phi^\top\Phi`,
    :math:`\mu_n = \Lambda_n^{-1}\Phi^\top y`, :math:`a_n = a_0 + n/2`,
    :math:`b_n = b_0 + \tfrac12(y^\top y - \mu_n^\top\Lambda_n\mu_n)`; predictive Student-t with
    :math:`2a_n` degrees of freedom, location :math:`\phi_*^\top\mu_n`, squared scale
    :math:`(b_n/a_n)(1+\phi_*^\top\Lambda_n^{-1}\phi_*)`. With ``known_noise`` = σ the predictive is
    :math:`N(\phi_*^\top\mu_n, \sigma^2 + \phi_*^\top S_n\phi_*)`,
    :math:`S_n = \sigma^2\Lambda_n^{-1}`.

    >>> prior = LinearGaussianPrior(known_noise=0.5)
    >>> cx, cy, qx, _ = prior.sample_tasks(1, 4, 2, torch.Generator().manual_seed(0))
    >>> mean, var = prior.predictive(cx.double(), cy.double(), qx.double())
    >>> bool((var > 0.25).all())
    True
    """

    task = "regression"
    n_classes = None

    def __init__(
        self,
        d: int = 1,
        a0: float = 2.0,
        b0: float = 1.0,
        lam: float = 1.0,
        known_noise: float | None = None,
    ) -> None:
        owner = "LinearGaussianPrior"
        self.d_x = check_int("d", owner, d, low=1, high=64)
        self.a0 = check_real("a0", owner, a0, low=1, low_open=True)  # a finite predictive variance
        self.b0 = check_real("b0", owner, b0, low=0, low_open=True)
        self.lam = check_real("lam", owner, lam, low=0, low_open=True)
        self.known_noise = (
            None
            if known_noise is None
            else check_real("known_noise", owner, known_noise, low=0, low_open=True)
        )

    @staticmethod
    def features(x: torch.Tensor) -> torch.Tensor:
        """:math:`\\phi(x) = [x, 1]`."""
        return torch.cat([x, torch.ones_like(x[..., :1])], dim=-1)

    def _sample(self, batch: int, n: int, g: torch.Generator | None):
        if self.known_noise is None:
            rng = np.random.default_rng(int(torch.randint(0, 2**31, (1,), generator=g)))
            var = torch.from_numpy(1 / rng.gamma(self.a0, 1 / self.b0, size=batch)).float()
        else:
            var = torch.full((batch,), self.known_noise**2)
        w = torch.randn(batch, self.d_x + 1, generator=g) * (var[:, None] / self.lam).sqrt()
        x = torch.rand(batch, n, self.d_x, generator=g) * 6 - 3
        mean = (self.features(x) @ w[:, :, None])[..., 0]
        return x, mean + var[:, None].sqrt() * torch.randn(batch, n, generator=g)

    def posterior(self, ctx_x: torch.Tensor, ctx_y: torch.Tensor):
        """``(mu_n (B,p), Lambda_n^{-1} (B,p,p), a_n (B,), b_n (B,))`` of the NIG posterior."""
        phi = self.features(ctx_x)
        eye = torch.eye(phi.shape[-1], dtype=phi.dtype)
        precision = self.lam * eye + phi.transpose(1, 2) @ phi
        cov = torch.linalg.inv(precision)
        mu = (cov @ (phi.transpose(1, 2) @ ctx_y[..., None]))[..., 0]
        a_n = torch.full((ctx_x.shape[0],), self.a0 + ctx_x.shape[1] / 2, dtype=phi.dtype)
        quad = (mu[:, None, :] @ precision @ mu[:, :, None])[:, 0, 0]
        b_n = self.b0 + 0.5 * ((ctx_y**2).sum(-1) - quad)
        return mu, cov, a_n, b_n

    def _predictive(self, ctx_x, ctx_y, query_x):
        mu, cov, a_n, b_n = self.posterior(ctx_x, ctx_y)
        phi = self.features(query_x)
        mean = (phi @ mu[:, :, None])[..., 0]
        spread = 1 + torch.einsum("bqi,bij,bqj->bq", phi, cov, phi)
        if self.known_noise is not None:
            return mean, self.known_noise**2 * spread
        scale2 = (b_n / a_n)[:, None] * spread
        nu = 2 * a_n[:, None]
        return mean, scale2 * nu / (nu - 2)

    def _decomposition(self, ctx_x, ctx_y, x_star, measure):
        mean, var = self._predictive(ctx_x, ctx_y, x_star)
        mu, cov, a_n, b_n = self.posterior(ctx_x, ctx_y)
        if self.known_noise is not None:
            noise = torch.full_like(var, self.known_noise**2)
            if measure == "variance":
                return var, noise
            return 0.5 * torch.log(2 * torch.pi * torch.e * var), 0.5 * torch.log(
                2 * torch.pi * torch.e * noise
            )
        if measure == "variance":  # E[sigma^2 | D] = b_n / (a_n - 1)
            return var, (b_n / (a_n - 1))[:, None].expand_as(var)
        nu = 2 * a_n[:, None].expand_as(var)
        scale = (var * (nu - 2) / nu).sqrt()
        total = torch.distributions.StudentT(nu, mean, scale).entropy()
        # E[log sigma^2] = log b_n - digamma(a_n) under IG(a_n, b_n)
        log_var = (b_n.log() - torch.digamma(a_n))[:, None].expand_as(var)
        return total, 0.5 * (torch.log(torch.tensor(2 * torch.pi * torch.e)) + log_var)


class BernoulliArmsPrior(_Prior):
    r"""K Bernoulli arms, one-hot arm input, :math:`p_a\sim\mathrm{Beta}(1,1)`.

    Posterior :math:`\mathrm{Beta}(1+s_a, 1+f_a)` from the successes and failures of arm a;
    predictive :math:`(1+s_a)/(2+s_a+f_a)`; aleatoric part
    :math:`-E[p\log p + (1-p)\log(1-p)]` with
    :math:`E[p\log p] = \tfrac{\alpha}{\alpha+\beta}(\psi(\alpha+1)-\psi(\alpha+\beta+1))`.
    A query's arm is the position of its largest coordinate.

    >>> prior = BernoulliArmsPrior(k=3)
    >>> x = torch.eye(3)[None, [0, 0, 1]]; y = torch.tensor([[1.0, 1.0, 0.0]])
    >>> prior.predictive(x, y, torch.eye(3)[None])[0, :, 1]
    tensor([0.7500, 0.3333, 0.5000])
    """

    task = "classification"
    n_classes = 2

    def __init__(self, k: int = 5) -> None:
        self.d_x = check_int("k", "BernoulliArmsPrior", k, low=1, high=10_000)

    def _sample(self, batch: int, n: int, g: torch.Generator | None):
        p = torch.rand(batch, self.d_x, generator=g)
        arms = torch.randint(0, self.d_x, (batch, n), generator=g)
        x = torch.nn.functional.one_hot(arms, self.d_x).float()
        return x, torch.bernoulli(torch.gather(p, 1, arms), generator=g)

    def _beta(self, ctx_x, ctx_y, query_x):
        onehot = torch.nn.functional.one_hot(ctx_x.argmax(-1), self.d_x).to(ctx_x.dtype)
        y = ctx_y.to(ctx_x.dtype)[..., None]
        alpha = 1 + (onehot * y).sum(1)  # (B, K)
        beta = 1 + (onehot * (1 - y)).sum(1)
        arm = query_x.argmax(-1)  # (B, q)
        return torch.gather(alpha, 1, arm), torch.gather(beta, 1, arm)

    def _predictive(self, ctx_x, ctx_y, query_x):
        alpha, beta = self._beta(ctx_x, ctx_y, query_x)
        p1 = alpha / (alpha + beta)
        return torch.stack([1 - p1, p1], dim=-1)

    def _decomposition(self, ctx_x, ctx_y, x_star, measure):
        alpha, beta = self._beta(ctx_x, ctx_y, x_star)
        s = alpha + beta
        dg = torch.digamma(s + 1)
        aleatoric = -(
            alpha / s * (torch.digamma(alpha + 1) - dg) + beta / s * (torch.digamma(beta + 1) - dg)
        )
        total = entropy_(torch.stack([beta / s, alpha / s], dim=-1))
        return total, aleatoric
