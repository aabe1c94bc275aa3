r"""FLOP counts: exact closed forms for the attention layers and a counter for whole models.

One multiply-add counts 2 FLOPs (a (a x b)(b x c) product costs 2abc), the convention of
``torch.utils.flop_counter`` (whose counts ours match; it is not used here because it imports
torch's compiler, seconds on a CPU); softmax, normalisation and element-wise work are not counted.
Per sample, with N tokens, width D, K heads of dimension p (inner width Kp) and m representatives:

* CBSA: :math:`2NDKp` (projection) :math:`+ 2K(2mNp)` (scores and extraction :math:`AW`)
  :math:`+ 2K(2m^2p)` (contraction) :math:`+ 2K(Nmp)` (broadcast) :math:`+ 2NKpD` (output):
  linear in N at fixed m;
* MSSA: :math:`2NDKp + 2K(2N^2p) + 2NKpD`: quadratic in N;
* softmax attention: :math:`2N D (3Kp) + 2K(2N^2p) + 2NKpD`;
* TSSA: :math:`2NDKp + 2K(Np) + 2NKpD` (the weighted second moment), linear in N.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from paperkit import check_choice, check_int, check_tensor, param_error

__all__ = ["attention_flops", "count_flops"]


def attention_flops(
    kind: str, N: int, dim: int, heads: int, dim_head: int, num_reps: int = 64
) -> int:
    """The matmul FLOPs of one attention layer on one sample of N tokens (formulas above).

    NaN policy: integers only (TypeError/ValueError otherwise).

    >>> attention_flops("cbsa", 197, 384, 6, 64, 64) < attention_flops("mssa", 197, 384, 6, 64)
    True
    """
    owner = "attention_flops"
    check_choice("kind", owner, kind, ("cbsa", "mssa", "tssa", "softmax"))
    N = check_int("N", owner, N, low=1)
    D = check_int("dim", owner, dim, low=1)
    K = check_int("heads", owner, heads, low=1)
    p = check_int("dim_head", owner, dim_head, low=1)
    m = check_int("num_reps", owner, num_reps, low=1)
    inner = K * p
    proj_in = 2 * N * D * inner * (3 if kind == "softmax" else 1)
    proj_out = 2 * N * inner * D
    core = {
        "cbsa": 2 * K * (2 * m * N * p + 2 * m * m * p + N * m * p),
        "mssa": 2 * K * 2 * N * N * p,
        "softmax": 2 * K * 2 * N * N * p,
        "tssa": 2 * K * N * p,
    }[kind]
    return proj_in + core + proj_out


class _MatmulCounter(TorchFunctionMode):
    """Counts, on the torch functions a model calls, 2mkn per (m x k)(k x n) product of every
    ``matmul``/``@``, ``bmm``, ``mm`` and ``linear``, and 2 * (output size) * (input channels /
    groups) * (kernel size) per convolution."""

    MATMULS = (torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__, torch.bmm, torch.mm)

    def __init__(self) -> None:
        super().__init__()
        self.flops = 0

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if func in self.MATMULS or func is F.linear:
            self.flops += 2 * out.numel() * args[0].shape[-1]
        elif func in (F.conv1d, F.conv2d, F.conv3d):
            self.flops += 2 * out.numel() * math.prod(args[1].shape[1:])
        return out


def count_flops(model: torch.nn.Module, x: torch.Tensor) -> int:
    """Total matmul and convolution FLOPs of ``model(x)``, counted on the torch functions it
    calls (matmul, bmm, mm, linear, convolutions), run without gradients; divide by the batch
    size for a per-sample count.

    NaN policy: NaN or inf in ``x`` is refused (ValueError).

    >>> from cbsa import CBSA
    >>> layer = CBSA(64, 4, 16, num_reps=4, rep_init="pool1d", has_cls=False)
    >>> count_flops(layer, torch.randn(1, 100, 64)) == attention_flops("cbsa", 100, 64, 4, 16, 4)
    True
    """
    if not isinstance(model, torch.nn.Module):
        raise param_error(
            "model", "count_flops", "a torch.nn.Module", type(model).__name__, cls=TypeError
        )
    check_tensor("x", "count_flops", x, dtype=None)
    counter = _MatmulCounter()
    with torch.no_grad(), counter:
        model(x)
    return int(counter.flops)
