r"""The static Schrödinger bridge: entropic OT with the mvOU transition cost.

The static SB between :math:`\mu_0` and :math:`\mu_1` relative to the reference is the coupling
:math:`\pi^* \propto e^{-c(x_0, x_1)}\,\mu_0\otimes\mu_1` (the paper's static problem), with the
cost the negative log transition density up to a constant,

.. math:: c(x_0, x_1) = \tfrac12 (x_1 - \mu_1(x_0))^\top \Sigma_1^{-1} (x_1 - \mu_1(x_0)),

i.e. entropic OT with regularisation :math:`\varepsilon = 1` in the cost's units. On samples it is
solved by log-domain Sinkhorn in float64.
"""

from __future__ import annotations

import math

import torch

from mvou._checks import points
from mvou.ou import MvOU
from paperkit import (
    Described,
    check_choice,
    check_int,
    check_memory,
    check_real,
    param_error,
)

__all__ = ["entropic_plan", "sb_cost_matrix"]


def _check_ref(owner: str, ref: object) -> MvOU:
    if not isinstance(ref, MvOU):
        raise param_error(
            "ref", owner, "an MvOU", Described(f"a {type(ref).__name__}"), cls=TypeError
        )
    return ref


def _cost(x0: torch.Tensor, x1: torch.Tensor, ref: MvOU) -> torch.Tensor:
    """The cost matrix without checks: whiten by chol(Sigma_1), then half squared distances."""
    mu1 = ref.m + (x0 - ref.m) @ ref.phi1.T
    y0 = torch.linalg.solve_triangular(ref.chol1, mu1.T, upper=False).T
    y1 = torch.linalg.solve_triangular(ref.chol1, x1.T, upper=False).T
    sq = (y0 * y0).sum(1)[:, None] + (y1 * y1).sum(1)[None, :] - 2 * y0 @ y1.T
    return 0.5 * sq.clamp_min(0)


def sb_cost_matrix(x0: torch.Tensor, x1: torch.Tensor, ref: MvOU) -> torch.Tensor:
    r"""The SB cost :math:`c_{ij} = \tfrac12 (x_{1j} - \mu_1(x_{0i}))^\top \Sigma_1^{-1}
    (x_{1j} - \mu_1(x_{0i}))`, ``(n, k)``, for ``x0`` ``(n, d)`` and ``x1`` ``(k, d)``.

    Equals :math:`-\log p_1(x_{1j} \mid x_{0i})` up to the constant
    :math:`\tfrac12\log\det(2\pi\Sigma_1)`. NaN policy: refused.

    >>> import torch
    >>> from mvou import MvOU
    >>> ref = MvOU(torch.zeros(2, 2), sigma=1.0)  # Brownian: c = |x1 - x0|^2 / 2
    >>> sb_cost_matrix(torch.zeros(1, 2), torch.tensor([[3.0, 4.0]]), ref)
    tensor([[12.5000]], dtype=torch.float64)
    """
    owner = "sb_cost_matrix"
    ref = _check_ref(owner, ref)
    dims = {"d": (ref.d, "ref")}
    x0 = points("x0", owner, x0, dims, ref.dtype, axis="n")
    x1 = points("x1", owner, x1, dims, ref.dtype, axis="k")
    check_memory("x1", owner, x1, 8.0 * 3 * x0.shape[0] * x1.shape[0])
    return _cost(x0, x1, ref)


def sinkhorn_log(
    cost: torch.Tensor, reg: float, *, tol: float = 1e-6, max_iter: int = 1000
) -> torch.Tensor:
    r"""Log-domain Sinkhorn for uniform marginals (no checks; :func:`entropic_plan` checks).

    Alternates :math:`f_i = \varepsilon\log a_i
    - \varepsilon\,\mathrm{LSE}_j((g_j - c_{ij})/\varepsilon)`
    and the same for :math:`g`; stops when the L1 error of the row sums is below ``tol`` (the
    column sums are exact after each :math:`g` update) or after ``max_iter`` iterations.
    """
    n, k = cost.shape
    log_a = torch.full((n,), -math.log(n), dtype=cost.dtype)
    log_b = torch.full((k,), -math.log(k), dtype=cost.dtype)
    K = -cost / reg
    f = torch.zeros(n, dtype=cost.dtype)
    g = torch.zeros(k, dtype=cost.dtype)
    for it in range(max_iter):
        f = log_a - torch.logsumexp(K + g[None, :], dim=1)
        g = log_b - torch.logsumexp(K + f[:, None], dim=0)
        if it % 10 == 9 or it == max_iter - 1:
            rows = torch.logsumexp(K + f[:, None] + g[None, :], dim=1).exp()
            if float((rows - log_a.exp()).abs().sum()) < tol:
                break
    return (K + f[:, None] + g[None, :]).exp()


def entropic_plan(
    x0: torch.Tensor,
    x1: torch.Tensor,
    ref: MvOU,
    reg: float = 1.0,
    method: str = "sinkhorn_log",
    *,
    tol: float = 1e-6,
    max_iter: int = 1000,
) -> torch.Tensor:
    r"""The entropic OT plan :math:`\pi \propto e^{-c/\varepsilon}` between the uniform
    empirical measures of ``x0`` ``(n, d)`` and ``x1`` ``(k, d)``, ``(n, k)``, float64.

    With ``reg`` :math:`= \varepsilon = 1` and the cost of :func:`sb_cost_matrix` this is the
    static Schrödinger bridge of the empirical marginals relative to ``ref``. Rows sum to
    :math:`1/n` and columns to :math:`1/k` up to ``tol`` (L1). ``method``: ``"sinkhorn_log"``
    (this package's torch loop) or ``"pot"`` (``ot.sinkhorn(..., method="sinkhorn_log")`` of
    POT, for cross-checking). Deterministic. NaN policy: refused.
    """
    owner = "entropic_plan"
    ref = _check_ref(owner, ref)
    reg = check_real("reg", owner, reg, low=0, low_open=True)
    check_choice("method", owner, method, ("sinkhorn_log", "pot"))
    tol = check_real("tol", owner, tol, low=0, low_open=True)
    max_iter = check_int("max_iter", owner, max_iter, low=1, high=1_000_000)
    cost = sb_cost_matrix(x0, x1, ref).to(torch.float64)
    if method == "pot":
        import ot

        n, k = cost.shape
        a = torch.full((n,), 1.0 / n, dtype=torch.float64)
        b = torch.full((k,), 1.0 / k, dtype=torch.float64)
        return ot.sinkhorn(a, b, cost, reg, method="sinkhorn_log", numItermax=max_iter, stopThr=tol)
    return sinkhorn_log(cost, reg, tol=tol, max_iter=max_iter)
