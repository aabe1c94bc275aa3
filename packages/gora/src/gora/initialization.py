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
from typing import Any

import torch
from torch import Tensor

from paperkit import (
    check_bool,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = ["init_factors", "kaiming_a", "lora_scaling"]


def generator_arg(owner: str, generator: Any) -> torch.Generator | None:
    """``generator`` when it is None or a ``torch.Generator``, else the worded ``TypeError``."""
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator", owner, "None or a torch.Generator", describe(generator), cls=TypeError
        )
    return generator


def lora_scaling(alpha: float, rank: int, rslora: bool = True) -> float:
    """The adapter scale ``s``: ``alpha / sqrt(rank)`` (rsLoRA) or ``alpha / rank``.

    ``alpha`` must be a finite positive number (NaN and inf are refused), ``rank`` a positive
    integer.

    >>> lora_scaling(16, 4), lora_scaling(16, 4, rslora=False)
    (8.0, 4.0)
    """
    owner = "lora_scaling"
    alpha = check_real("alpha", owner, alpha, low=0, low_open=True)
    rank = check_int("rank", owner, rank, low=1)
    rslora = check_bool("rslora", owner, rslora)
    return scaling(alpha, rank, rslora)


def scaling(alpha: float, rank: int, rslora: bool) -> float:
    """:func:`lora_scaling` of checked arguments."""
    return alpha / math.sqrt(rank) if rslora else alpha / rank


def kaiming_a(
    rank: int,
    in_features: int,
    *,
    dtype: torch.dtype = torch.float32,
    generator: torch.Generator | None = None,
) -> Tensor:
    """A random ``A`` (rank x in): ``kaiming_uniform_(a=sqrt(5))``, peft's ``lora_A`` default,
    i.e. uniform on ``[-1/sqrt(in), 1/sqrt(in)]``. ``dtype`` is a floating torch dtype; sizes
    whose matrix would not fit in memory are refused before allocating.

    >>> kaiming_a(2, 3, generator=torch.Generator().manual_seed(0)).abs().max() <= 3**-0.5
    tensor(True)
    """
    owner = "kaiming_a"
    rank = check_int("rank", owner, rank, low=1)
    in_features = check_int("in_features", owner, in_features, low=1)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise param_error("dtype", owner, "a floating torch dtype", describe(dtype), cls=TypeError)
    generator_arg(owner, generator)
    size = rank * in_features * dtype.itemsize
    check_memory(
        "rank" if rank >= in_features else "in_features", owner, max(rank, in_features), size
    )
    return random_a(rank, in_features, dtype, generator)


def random_a(
    rank: int, in_features: int, dtype: torch.dtype, generator: torch.Generator | None
) -> Tensor:
    """:func:`kaiming_a` of checked arguments."""
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

    Shapes:
        G: ``(m, n)``, floating, finite (NaN or inf are refused with a ``ValueError``).

    ``alpha`` > 0 and ``gamma`` >= 0 must be finite; a ``rank`` whose factors would not fit in
    memory is refused before any allocation.

    >>> A, B = init_factors(torch.ones(4, 6), rank=2, alpha=8.0, generator=torch.Generator())
    >>> tuple(A.shape), tuple(B.shape)
    ((2, 6), (4, 2))
    """
    owner = "init_factors"
    check_tensor("G", owner, G, shape=("m", "n"))
    rank = check_int("rank", owner, rank, low=1)
    alpha = check_real("alpha", owner, alpha, low=0, low_open=True)
    gamma = check_real("gamma", owner, gamma, low=0)
    rslora = check_bool("rslora", owner, rslora)
    generator_arg(owner, generator)
    m, n = G.shape
    check_memory("rank", owner, rank, factor_bytes(m, n, rank, G.dtype))
    return gradient_factors(G, rank, alpha, gamma, rslora, generator)


def factor_bytes(m: int, n: int, rank: int, dtype: torch.dtype) -> int:
    """Bytes :func:`init_factors` allocates at most: ``A``, ``B``, ``A A^T`` and one solve, in the
    working precision (float64 for float64 ``G``, else float32)."""
    work = 8 if dtype == torch.float64 else 4
    return work * (2 * rank * n + 2 * m * rank + rank * rank)


def gradient_factors(
    G: Tensor,
    rank: int,
    alpha: float,
    gamma: float,
    rslora: bool,
    generator: torch.Generator | None,
) -> tuple[Tensor, Tensor]:
    """:func:`init_factors` of checked arguments."""
    m, n = G.shape
    work = torch.float64 if G.dtype == torch.float64 else torch.float32
    A = random_a(rank, n, work, generator).to(G.device)
    Gw = G.to(work)
    if rank <= n:
        # B_ls^T = (A A^T)^{-1} A G^T: one r x r solve.
        B_ls = torch.linalg.solve(A @ A.T, A @ Gw.T).T
    else:  # A A^T is singular (rank n < r): the minimum-norm least-squares solution
        B_ls = Gw @ torch.linalg.pinv(A)
    xi = gamma * math.sqrt(n / rank) / scaling(alpha, rank, rslora)
    B = -xi * B_ls
    return A.to(G.dtype).contiguous(), B.to(G.dtype).contiguous()
