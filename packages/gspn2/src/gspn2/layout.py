r"""The line layout every fast backend scans, and the autograd Function they share.

Layout: ``x``, ``lam``, ``h`` are (N, D, C, L, S) and the weights (N, D, G, L, S), the scan
running over the L lines with the S pixels of a line contiguous; D direction slots share one call,
slot d scanning backwards when ``reverse[d]``. With :math:`W_t` the tridiagonal matrix of line t
(:math:`W_t[s, s-1] = w^-_t[s]`, :math:`W_t[s, s] = w^0_t[s]`, :math:`W_t[s, s+1] = w^+_t[s]`)
and :math:`h_{-1} = 0`,

.. math::  h_t = \lambda_t \odot x_t + W_t h_{t-1},

restarting (:math:`h_{t-1} := 0`) at every t with ``t % chunk == 0``. The backward pass is the
adjoint scan in reverse order,

.. math::

    g_t = \partial L/\partial h_t + W_{t+1}^\top g_{t+1},\quad
    \partial x_t = \lambda_t g_t,\quad \partial\lambda_t = x_t g_t,\quad
    \partial w^-_t[s] = \sum_{c \in \text{group}} g_t[c, s]\, h_{t-1}[c, s-1]

(likewise :math:`w^0`, :math:`w^+`), the weight gradients summed over the channels sharing them.

A backend is a module with ``forward(x, w_m, w_0, w_p, lam, chunk, reverse) -> h`` and
``backward(grad_h, h, x, w_m, w_0, w_p, lam, chunk, reverse) -> (dx, dw_m, dw_0, dw_p, dlam)`` on
this layout: :mod:`gspn2.scan` (torch), :mod:`gspn2.kernels.fused` and
:mod:`gspn2.kernels.multilaunch` (CUDA).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

import torch
from torch.autograd.function import once_differentiable

__all__ = ["LineScan", "scan_directions"]

Weights = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


class LineScan(torch.autograd.Function):
    """``h = LineScan.apply(x, w_m, w_0, w_p, lam, chunk, reverse, backend)`` on the line layout,
    ``backend`` a module with ``forward`` and ``backward`` (see the module docstring)."""

    @staticmethod
    def forward(ctx, x, w_m, w_0, w_p, lam, chunk, reverse, backend):  # noqa: D102
        h = backend.forward(x, w_m, w_0, w_p, lam, chunk, tuple(reverse))
        ctx.save_for_backward(x, w_m, w_0, w_p, lam, h)
        ctx.chunk, ctx.reverse, ctx.backend = chunk, tuple(reverse), backend
        return h

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_h):  # noqa: D102
        x, w_m, w_0, w_p, lam, h = ctx.saved_tensors
        grads = ctx.backend.backward(
            grad_h.contiguous(), h, x, w_m, w_0, w_p, lam, ctx.chunk, ctx.reverse
        )
        return (*grads, None, None, None)


def _to_layout(t: torch.Tensor, horizontal: bool) -> torch.Tensor:
    """(B, K, C, H, W) -> (B, K, C, L, S): for → and ← the lines are the columns."""
    return (t.transpose(-1, -2) if horizontal else t).contiguous()


def _from_layout(t: torch.Tensor, horizontal: bool) -> torch.Tensor:
    return t.transpose(-1, -2) if horizontal else t


def scan_directions(
    x: torch.Tensor,
    weights: Sequence[Weights],
    lams: Sequence[torch.Tensor],
    directions: Sequence[str],
    chunk: int | None,
    backend: ModuleType,
) -> torch.Tensor:
    """Scan ``x`` (B, C, H, W) in directions along one axis (→ ←, or ↓ ↑) in one backend call.

    ``weights[k]`` (three (B, G, H, W) tensors) and ``lams[k]`` (B, C, H, W) belong to
    ``directions[k]``. Returns (B, K, C, H, W), each slot in the input's orientation.
    """
    horizontal = directions[0] in ("lr", "rl")
    length = x.shape[-1] if horizontal else x.shape[-2]
    k = len(directions)
    xs = _to_layout(x.unsqueeze(1).expand(-1, k, -1, -1, -1), horizontal)
    ws = [_to_layout(torch.stack([w[j] for w in weights], dim=1), horizontal) for j in range(3)]
    ls = _to_layout(torch.stack(list(lams), dim=1), horizontal)
    reverse = tuple(d in ("rl", "bt") for d in directions)
    h = LineScan.apply(xs, *ws, ls, chunk or length, reverse, backend)
    return _from_layout(h, horizontal)
