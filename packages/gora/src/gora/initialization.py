"""Step 4 of GoRA: the adapter starts as one compressed gradient-descent step.

For a layer with averaged gradient ``G`` (m x n, out x in) and rank ``r``:

- ``A`` (r x n) is random, kaiming-uniform as peft's ``lora_A`` (bound ``1/sqrt(n)``);
- ``B_ls = G A^T (A A^T)^{-1} = G A^+`` is the least-squares solution of ``B A ~ G``;
- ``B = -xi B_ls`` (m x r), with ``xi = gamma sqrt(n/r) / s`` and the adapter scale
  ``s = alpha / sqrt(r)`` (rsLoRA; ``alpha / r`` with ``rslora=False``).

Then the initial update of the adapted layer is a scaled gradient step projected onto the row
space of ``A``:

    s B A = -gamma sqrt(n/r) G A^+ A,

where ``sqrt(n/r)`` compensates that projecting the rows of ``G`` onto a random r-dimensional
subspace keeps about ``r/n`` of ``||G||_F^2``, so ``||s B A||_F ~ gamma ||G||_F``. The pretrained
weight is not modified.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from gora._checks import positive_int
from paperkit import Described, param_error

__all__ = ["init_factors", "kaiming_a", "lora_scaling"]


def lora_scaling(alpha: float, rank: int, rslora: bool = True) -> float:
    """The adapter scale ``s``: ``alpha / sqrt(rank)`` (rsLoRA) or ``alpha / rank``."""
    return alpha / math.sqrt(rank) if rslora else alpha / rank


def kaiming_a(
    rank: int,
    in_features: int,
    *,
    dtype: torch.dtype = torch.float32,
    generator: torch.Generator | None = None,
) -> Tensor:
    """A random ``A`` (rank x in): ``kaiming_uniform_(a=sqrt(5))``, peft's ``lora_A`` default,
    i.e. uniform on ``[-1/sqrt(in), 1/sqrt(in)]``."""
    A = torch.empty(rank, in_features, dtype=dtype)
    torch.nn.init.kaiming_uniform_(A, a=math.sqrt(5), generator=generator)
    return A


def init_factors(
    G: Tensor,
    rank: int,
    alpha: float,
    gamma: float = 5e-2,
    rslora: bool = True,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor]:
    """GoRA's initial factors ``(A, B)`` for the averaged gradient ``G`` (m x n).

    Returns ``A`` (rank x n, random) and ``B = -xi G A^+`` (m x rank) with
    ``xi = gamma sqrt(n/rank) / s``, so that ``s B A = -gamma sqrt(n/rank) G A^+ A``
    (see the module docstring). Both are on ``G``'s device in ``G``'s dtype; the least-squares
    solve runs in float64 when ``G`` is float64, else in float32.
    """
    owner = "init_factors"
    if not isinstance(G, Tensor) or G.ndim != 2 or not G.is_floating_point():
        shown = Described(f"shape {tuple(G.shape)}") if isinstance(G, Tensor) else G
        raise param_error("G", owner, "a floating 2-D tensor (out x in)", shown)
    rank = positive_int("rank", owner, rank)
    if not (isinstance(alpha, (int, float)) and alpha > 0):
        raise param_error("alpha", owner, "a positive number", alpha)
    if not (isinstance(gamma, (int, float)) and gamma >= 0):
        raise param_error("gamma", owner, "a non-negative number", gamma)
    if not torch.isfinite(G).all():
        raise param_error("G", owner, "finite", Described("a tensor with NaN or inf"))
    m, n = G.shape
    work = torch.float64 if G.dtype == torch.float64 else torch.float32
    A = kaiming_a(rank, n, dtype=work, generator=generator).to(G.device)
    Gw = G.to(work)
    if rank <= n:
        # B_ls^T = (A A^T)^{-1} A G^T: one r x r solve.
        B_ls = torch.linalg.solve(A @ A.T, A @ Gw.T).T
    else:  # A A^T is singular (rank n < r): the minimum-norm least-squares solution
        B_ls = Gw @ torch.linalg.pinv(A)
    xi = gamma * math.sqrt(n / rank) / lora_scaling(alpha, rank, rslora)
    B = -xi * B_ls
    return A.to(G.dtype).contiguous(), B.to(G.dtype).contiguous()
