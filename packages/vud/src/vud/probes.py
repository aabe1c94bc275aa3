r"""Probe candidates and the variational bound of one probe set (paper §3, eqs. 4-6).

For an auxiliary probe set :math:`Z=(z_1..z_K)` whose labels :math:`U` are drawn from the model
itself, sequentially, :math:`q(U|Z,D)=\prod_k q(u_k|z_k, D\cup\{(z_j,u_j)\}_{j<k})`,

.. math:: V_a(Z) = E_{q(U|Z,D)} H[q(y^*|x^*, D\cup(Z,U))] \;\ge\; U_a,
          \qquad V_e(Z) = H[q(y^*|x^*,D)] - V_a(Z) \;\le\; U_e

for a Bayesian predictor (:math:`y^*\perp U|\theta`, and conditioning does not increase
entropy). The consistency (martingale) check compares :math:`q(y^*|x^*,D)` with
:math:`\bar q(y^*|x^*,Z,D) = \sum_U q(U|Z,D)\, q(y^*|x^*,D\cup(Z,U))`:
:math:`KL_Z = KL(q(y^*|x^*,D)\,\|\,\bar q)` is 0 for an exact Bayesian predictor.

Every prediction is averaged over ``num_permutations`` random orders of the context (the probe
pairs are inserted into the context and permuted with it); all contexts of one bound go through
the predictor in K+1 batched calls. Regression (K = 1) replaces the sum over u by ``num_u_samples``
draws :math:`u\sim q(u|z,D)` (a Gaussian with the predictive's moments) and moment-matches
Gaussians: :math:`V_a=\tfrac1M\sum_j \tfrac12\log(2\pi e\sigma_j^2)`,
:math:`V_a^{var}=\tfrac1M\sum_j\sigma_j^2`, :math:`\bar q=N(\bar\mu, \overline{\sigma^2}+
\widehat{Var}(\mu_j))` (Bessel-corrected).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Literal

import torch

from paperkit import check_choice, check_int, check_real, check_tensor, describe, param_error
from vud.info import entropy_, gaussian_entropy_, gaussian_kl_, kl_
from vud.predictors import ICLPredictor, check_one_context

__all__ = ["ProbeBound", "probe_bound", "probe_candidates"]

#: The most context orders ``num_permutations="all"`` may enumerate ((n + K)! ≤ 8!).
MAX_ALL_PERMUTATIONS = math.factorial(8)


@dataclass(frozen=True)
class ProbeBound:
    """The bound of each of m probe sets.

    Attributes:
        va: (m,) :math:`V_a(Z)` in the requested base.
        va_var: (m,) :math:`E_U Var[y^*|x^*,D\\cup(Z,U)]` (class index as the value for
            classification).
        kl: (m,) :math:`KL(q(y^*|x^*,D)\\|\\bar q)` in nats.
        marginal: (m, C) :math:`\\bar q` probabilities, or (m, 2) ``[mean, var]`` (regression).
        total: :math:`H[q(y^*|x^*,D)]` in the requested base.
        total_var: :math:`Var[y^*|x^*,D]`.
        predictive: :math:`q(y^*|x^*,D)`: (C,) probabilities or (2,) ``[mean, var]``.
    """

    va: torch.Tensor
    va_var: torch.Tensor
    kl: torch.Tensor
    marginal: torch.Tensor
    total: float
    total_var: float
    predictive: torch.Tensor


def _permutations(n: int, count: int | str, g: torch.Generator | None) -> torch.Tensor:
    if count == "all":
        return torch.tensor(list(itertools.permutations(range(n))), dtype=torch.long).reshape(-1, n)
    return torch.stack([torch.randperm(n, generator=g) for _ in range(count)])


def _call(pred: ICLPredictor, cx, cy, qx, batch_size: int | None):
    """The predictor over stacked contexts, in chunks of ``batch_size``; outputs checked."""
    step = cx.shape[0] if batch_size is None else batch_size
    outs = [
        pred.predict(cx[i : i + step], cy[i : i + step], qx[i : i + step])
        for i in range(0, cx.shape[0], step)
    ]
    if pred.task == "classification":
        probs = torch.cat(outs)
        tol = 1e-3 if probs.dtype != torch.float64 else 1e-8
        probs = probs.to(cx.dtype)
        ok = probs.shape == (*qx.shape[:2], pred.n_classes) and bool(torch.isfinite(probs).all())
        ok = ok and bool((probs >= -tol).all()) and bool(((probs.sum(-1) - 1).abs() <= tol).all())
        if not ok:
            raise param_error(
                "pred",
                "probe_bound",
                "a predictor returning probabilities summing to 1",
                describe(probs),
            )
        return probs.clamp_min(0) / probs.clamp_min(0).sum(-1, keepdim=True)
    mean = torch.cat([o[0] for o in outs]).to(cx.dtype)
    var = torch.cat([o[1] for o in outs]).to(cx.dtype)
    ok = mean.shape == var.shape == qx.shape[:2] and bool(torch.isfinite(mean).all())
    if not (ok and bool(torch.isfinite(var).all()) and bool((var > 0).all())):
        raise param_error(
            "pred",
            "probe_bound",
            "a predictor returning finite means and positive variances",
            describe(var),
        )
    return mean, var


def _gaussian_mixture(mean: torch.Tensor, var: torch.Tensor, dim: int, bessel: bool):
    """Moment-matched Gaussian of an equal-weight mixture along ``dim``."""
    spread = (
        mean.var(dim, correction=1)
        if bessel and mean.shape[dim] > 1
        else mean.var(dim, correction=0)
    )
    return mean.mean(dim), var.mean(dim) + spread


def _label_variance(probs: torch.Tensor) -> torch.Tensor:
    values = torch.arange(probs.shape[-1], dtype=probs.dtype)
    first = (probs * values).sum(-1)
    return (probs * values**2).sum(-1) - first**2


def _augment(ctx_x, ctx_y, Z, U, perms):
    """Contexts D ∪ {(z_k, u_k)}: (m, L, P, n+k, d) inputs and (m, L, P, n+k) labels, permuted."""
    m, k = Z.shape[0], U.shape[-1]
    n, d = ctx_x.shape
    L = U.shape[1] if U.ndim == 3 else U.shape[0]
    U = U if U.ndim == 3 else U[None].expand(m, -1, -1)
    xs = torch.cat([ctx_x.expand(m, L, n, d), Z[:, None, :k].expand(m, L, k, d)], dim=2)
    ys = torch.cat([ctx_y.expand(m, L, n), U.to(ctx_y.dtype)], dim=2)
    return xs[:, :, perms], ys[:, :, perms]


def probe_bound(
    pred: ICLPredictor,
    ctx_x: torch.Tensor,
    ctx_y: torch.Tensor,
    x_star: torch.Tensor,
    Z: torch.Tensor,
    num_permutations: int | Literal["all"] = 10,
    generator: torch.Generator | None = None,
    *,
    num_u_samples: int = 10,
    batch_size: int | None = None,
    base: float = math.e,
) -> ProbeBound:
    r""":math:`V_a(Z)`, :math:`KL_Z` and :math:`\bar q` for m probe sets (see the module docstring).

    Args:
        pred: an :class:`vud.ICLPredictor`.
        ctx_x, ctx_y: the context D, (n, d) and (n,).
        x_star: the query, (d,).
        Z: probe sets, (m, K, d); K ≤ 3 for classification, K = 1 for regression.
        num_permutations: context orders averaged over (an int, or ``"all"`` for every order
            when (n+K)! ≤ 8!). 1 suffices for a permutation-invariant predictor.
        generator: drives the permutations and the regression samples of u.
        num_u_samples: M, draws of u per probe (regression).
        batch_size: contexts per predictor call (None: all in one call; 1: one call each).
        base: of the entropies (``math.e``: nats; KL stays in nats).

    NaN policy: NaN/inf inputs are refused; a predictor returning non-probabilities (or
    non-positive variances) raises a ValueError naming ``pred``.

    >>> from vud import BayesOracleICL, LogisticPrior
    >>> oracle = BayesOracleICL(LogisticPrior())
    >>> f64 = torch.float64
    >>> cx, cy = torch.tensor([[-1.0], [1.0]], dtype=f64), torch.tensor([0.0, 1.0], dtype=f64)
    >>> x_star, Z = torch.zeros(1, dtype=f64), torch.tensor([[[0.2]]], dtype=f64)
    >>> out = probe_bound(oracle, cx, cy, x_star, Z, 1)
    >>> bool(out.va[0] <= out.total) and float(out.kl[0]) < 1e-10
    True
    """
    owner = "probe_bound"
    dims = check_one_context(owner, pred, ctx_x, ctx_y, x_star)
    check_tensor("Z", owner, Z, shape=(None, None, "d"), dims=dims)
    K = Z.shape[1]
    top = 3 if pred.task == "classification" else 1
    if not 1 <= K <= top:
        raise param_error("Z", owner, f"(m, K, d) with 1 <= K <= {top} probes per set", describe(Z))
    if num_permutations != "all":
        num_permutations = check_int(
            "num_permutations", owner, num_permutations, low=1, high=10_000
        )
    elif math.factorial(ctx_x.shape[0] + K) > MAX_ALL_PERMUTATIONS:
        raise param_error(
            "num_permutations", owner, "an integer when (n + K)! > 8!", num_permutations
        )
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator", owner, "a torch.Generator or None", describe(generator), cls=TypeError
        )
    M = check_int("num_u_samples", owner, num_u_samples, low=2, high=10_000)
    if batch_size is not None:
        batch_size = check_int("batch_size", owner, batch_size, low=1)
    log_base = math.log(check_real("base", owner, base, low=1, low_open=True))
    C = pred.n_classes or 1
    contexts = Z.shape[0] * (C**K if pred.task == "classification" else M)
    contexts *= (
        math.factorial(ctx_x.shape[0] + K) if num_permutations == "all" else num_permutations
    )
    if contexts > 5_000_000:
        raise param_error(
            "Z", owner, f"few enough probe contexts (at most 5e6; asked {contexts})", describe(Z)
        )

    # validate D through the predictor's own checks (one context, the query and the probes)
    from vud.predictors import check_context

    task_classes = pred.n_classes if pred.task == "classification" else None
    cx, cy, queries = check_context(
        owner,
        ctx_x[None],
        ctx_y[None],
        torch.cat([x_star[None], Z[:, 0]])[None],
        pred.task,
        task_classes,
        None,
    )
    cx, cy = cx[0], cy[0]
    Z = Z.to(cx.dtype)
    n = cx.shape[0]
    base_perm = _permutations(n, num_permutations, generator)
    stage0 = _call(
        pred, cx[base_perm], cy[base_perm], queries.expand(len(base_perm), -1, -1), batch_size
    )
    if pred.task == "classification":
        return _classification(
            pred,
            cx,
            cy,
            x_star.to(cx.dtype),
            Z,
            stage0,
            num_permutations,
            generator,
            batch_size,
            log_base,
        )
    return _regression(
        pred,
        cx,
        cy,
        x_star.to(cx.dtype),
        Z,
        stage0,
        num_permutations,
        generator,
        M,
        batch_size,
        log_base,
    )


def _classification(pred, cx, cy, x_star, Z, stage0, P, g, batch_size, log_base) -> ProbeBound:
    m, K, d = Z.shape
    C = pred.n_classes
    probs0 = stage0.mean(0)  # (1 + m, C): permutation average
    p0, pu = probs0[0], probs0[1:]
    weight = pu  # (m, C^k): probability of each label prefix
    for k in range(1, K + 1):
        U = torch.cartesian_prod(*[torch.arange(C)] * k).reshape(-1, k)  # (C^k, k)
        perms = _permutations(cx.shape[0] + k, P, g)
        xs, ys = _augment(cx, cy, Z, U, perms)
        L, npr = U.shape[0], perms.shape[0]
        query = (x_star[None].expand(m, d) if k == K else Z[:, k])[:, None, None, None, :]
        query = query.expand(m, L, npr, 1, d)
        out = _call(
            pred,
            xs.reshape(-1, *xs.shape[-2:]),
            ys.reshape(-1, ys.shape[-1]),
            query.reshape(-1, 1, d),
            batch_size,
        )
        out = out.reshape(m, L, npr, C).mean(2)  # (m, C^k, C)
        if k < K:
            weight = (weight[:, :, None] * out).reshape(m, -1)
    va = (weight * entropy_(out)).sum(-1) / log_base
    va_var = (weight * _label_variance(out)).sum(-1)
    marginal = (weight[:, :, None] * out).sum(1)
    kl = kl_(p0.expand_as(marginal), marginal)
    return ProbeBound(
        va=va,
        va_var=va_var,
        kl=kl,
        marginal=marginal,
        total=float(entropy_(p0)) / log_base,
        total_var=float(_label_variance(p0)),
        predictive=p0,
    )


def _regression(pred, cx, cy, x_star, Z, stage0, P, g, M, batch_size, log_base) -> ProbeBound:
    m, _, d = Z.shape
    mean0, var0 = _gaussian_mixture(*stage0, dim=0, bessel=False)  # (1 + m,)
    eps = torch.randn(m, M, generator=g, dtype=cx.dtype)
    U = (mean0[1:, None] + var0[1:, None].sqrt() * eps)[..., None]  # (m, M, 1)
    perms = _permutations(cx.shape[0] + 1, P, g)
    xs, ys = _augment(cx, cy, Z, U, perms)
    npr = perms.shape[0]
    query = x_star.expand(m * M * npr, 1, d)
    mean, var = _call(
        pred, xs.reshape(-1, *xs.shape[-2:]), ys.reshape(-1, ys.shape[-1]), query, batch_size
    )
    mean, var = _gaussian_mixture(
        mean.reshape(m, M, npr), var.reshape(m, M, npr), dim=2, bessel=False
    )
    bar_mean, bar_var = _gaussian_mixture(mean, var, dim=1, bessel=True)
    kl = gaussian_kl_(mean0[0].expand(m), var0[0].expand(m), bar_mean, bar_var)
    return ProbeBound(
        va=gaussian_entropy_(var).mean(1) / log_base,
        va_var=var.mean(1),
        kl=kl,
        marginal=torch.stack([bar_mean, bar_var], dim=-1),
        total=float(gaussian_entropy_(var0[0])) / log_base,
        total_var=float(var0[0]),
        predictive=torch.stack([mean0[0], var0[0]]),
    )


def probe_candidates(
    x_star: torch.Tensor,
    ctx_x: torch.Tensor,
    num_z: int = 15,
    perturbation_std: float = 0.1,
    perturb_about: Literal["x", "data_mean"] = "x",
    decimal_places: int = 1,
    num_probes: int = 1,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    r"""Up to ``num_z`` distinct probe sets :math:`z\sim N(c, (s\cdot std_D)^2)` per feature,
    rounded to ``decimal_places``; (m, K, d), m ≤ ``num_z``.

    :math:`c` is :math:`x^*` (``perturb_about="x"``) or the context mean (``"data_mean"``);
    :math:`std_D` the per-feature (Bessel) standard deviation of ``ctx_x`` (1 where it is 0 or
    undefined); draws are clipped to ±5 standard deviations. At most 100 rounds of ``num_z`` draws:
    when fewer distinct rounded values exist (d = 1 with a coarse rounding), the distinct ones
    found are returned. NaN policy: NaN/inf inputs are refused.

    >>> g = torch.Generator().manual_seed(0)
    >>> z = probe_candidates(torch.zeros(1), torch.randn(20, 1), num_z=4, generator=g)
    >>> z.shape[1:], len({tuple(r.ravel().tolist()) for r in z}) == len(z)
    (torch.Size([1, 1]), True)
    """
    owner = "probe_candidates"
    dims: dict = {}
    check_tensor("x_star", owner, x_star, shape=("d",), dims=dims)
    check_tensor("ctx_x", owner, ctx_x, shape=(None, "d"), dims=dims)
    num_z = check_int("num_z", owner, num_z, low=1, high=100_000)
    s = check_real("perturbation_std", owner, perturbation_std, low=0, low_open=True)
    check_choice("perturb_about", owner, perturb_about, ("x", "data_mean"))
    places = check_int("decimal_places", owner, decimal_places, low=0, high=12)
    K = check_int("num_probes", owner, num_probes, low=1, high=3)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator", owner, "a torch.Generator or None", describe(generator), cls=TypeError
        )
    centre = x_star if perturb_about == "x" else ctx_x.mean(0)
    std = ctx_x.std(0) if ctx_x.shape[0] > 1 else torch.ones_like(x_star)
    std = torch.where(torch.isfinite(std) & (std > 0), std, torch.ones_like(std))
    found: dict[tuple, torch.Tensor] = {}
    for _ in range(100):
        noise = torch.randn(num_z, K, x_star.shape[0], generator=generator, dtype=x_star.dtype)
        draws = torch.round(centre + s * std * noise.clamp(-5, 5), decimals=places)
        for row in draws:
            found.setdefault(tuple(row.ravel().tolist()), row)
            if len(found) == num_z:
                return torch.stack(list(found.values()))
    return torch.stack(list(found.values()))
