r"""The line scan on the kernel layout, its adjoint, and the autograd Function that dispatches them.

Kernel layout: ``x``, ``lam``, ``h`` are (N, D, C, L, S) and the weights (N, D, G, L, S), with the
scan running over the L lines and the S pixels of a line contiguous; D direction slots share one
call, slot d scanning backwards when ``reverse[d]``. With :math:`W_t` the tridiagonal matrix of
line t (:math:`W_t[s, s-1] = w^-_t[s]`, :math:`W_t[s, s] = w^0_t[s]`,
:math:`W_t[s, s+1] = w^+_t[s]`) and :math:`h_{-1} = 0`,

.. math::  h_t = \lambda_t \odot x_t + W_t h_{t-1},

restarting (:math:`h_{t-1} := 0`) at every t with ``t % chunk == 0``. The backward pass is the
adjoint scan in reverse order,

.. math::

    g_t = \partial L/\partial h_t + W_{t+1}^\top g_{t+1},\quad
    \partial x_t = \lambda_t g_t,\quad \partial\lambda_t = x_t g_t,\quad
    \partial w^-_t[s] = \sum_{c \in \text{group}} g_t[c, s]\, h_{t-1}[c, s-1]

(likewise :math:`w^0`, :math:`w^+`), the weight gradients summed over the channels that share them.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.autograd.function import once_differentiable

__all__ = ["GSPNScanFunction", "scan_backward_torch", "scan_forward_torch", "scan_naive"]


def _grouped(t: torch.Tensor, groups: int) -> torch.Tensor:
    """(N, C, L, S) -> (N, G, C/G, L, S): the channels of each weight group together."""
    n, c, l, s = t.shape
    return t.view(n, groups, c // groups, l, s)


def _order(length: int, rev: bool) -> list[int]:
    """The lines in scan order."""
    return list(range(length - 1, -1, -1)) if rev else list(range(length))


def scan_forward_torch(
    x: torch.Tensor,
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    chunk: int,
    reverse: Sequence[bool],
) -> torch.Tensor:
    """Forward scan, a loop over the L lines vectorised over N, C and S (per direction slot)."""
    groups = w_m.shape[2]
    h = torch.empty_like(x)
    for d, rev in enumerate(reverse):
        drive = _grouped(lam[:, d] * x[:, d], groups)
        wm, w0, wp = (w[:, d].unsqueeze(2) for w in (w_m, w_0, w_p))
        out = _grouped(h[:, d], groups)
        prev = drive
        for t, l in enumerate(_order(x.shape[3], rev)):
            cur = drive[..., l, :]
            if t % chunk:
                cur = cur + w0[..., l, :] * prev
                cur[..., 1:] += wm[..., l, 1:] * prev[..., :-1]
                cur[..., :-1] += wp[..., l, :-1] * prev[..., 1:]
            out[..., l, :] = cur
            prev = cur
    return h


def scan_backward_torch(
    grad_h: torch.Tensor,
    h: torch.Tensor,
    x: torch.Tensor,
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    chunk: int,
    reverse: Sequence[bool],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Adjoint scan (reverse scan order); returns (dx, dw_m, dw_0, dw_p, dlam)."""
    groups, length = w_m.shape[2], x.shape[3]
    g_all = torch.empty_like(x)
    prev = torch.zeros_like(x)  # h_{t-1} at line l(t), zero where the scan restarts
    for d, rev in enumerate(reverse):
        gh = _grouped(grad_h[:, d], groups)
        wm, w0, wp = (w[:, d].unsqueeze(2) for w in (w_m, w_0, w_p))
        g = _grouped(g_all[:, d], groups)
        order = _order(length, rev)
        nxt = gh
        for t in range(length - 1, -1, -1):
            l = order[t]
            cur = gh[..., l, :]
            if t + 1 < length and (t + 1) % chunk:
                ln = order[t + 1]
                cur = cur + w0[..., ln, :] * nxt
                cur[..., :-1] += wm[..., ln, 1:] * nxt[..., 1:]
                cur[..., 1:] += wp[..., ln, :-1] * nxt[..., :-1]
            g[..., l, :] = cur
            nxt = cur
        if rev:
            prev[:, d, :, :-1] = h[:, d, :, 1:]
            prev[:, d, :, list(range(length - 1, -1, -chunk))] = 0
        else:
            prev[:, d, :, 1:] = h[:, d, :, :-1]
            prev[:, d, :, ::chunk] = 0
    g6 = g_all.view(*w_m.shape[:3], -1, *x.shape[3:])
    p6 = prev.view_as(g6)
    dw_m, dw_p = torch.zeros_like(w_m), torch.zeros_like(w_p)
    dw_0 = (g6 * p6).sum(3)
    dw_m[..., 1:] = (g6[..., 1:] * p6[..., :-1]).sum(3)
    dw_p[..., :-1] = (g6[..., :-1] * p6[..., 1:]).sum(3)
    return lam * g_all, dw_m, dw_0, dw_p, x * g_all


class GSPNScanFunction(torch.autograd.Function):
    """``h = GSPNScanFunction.apply(x, w_m, w_0, w_p, lam, chunk, reverse, backend)`` on the kernel
    layout; ``backend`` is ``"torch"``, ``"cuda"`` (fused kernels) or ``"cuda_multilaunch"`` (one
    launch per line). The backward pass is the adjoint scan of the same backend."""

    @staticmethod
    def forward(ctx, x, w_m, w_0, w_p, lam, chunk, reverse, backend):  # noqa: D102
        if backend == "torch":
            h = scan_forward_torch(x, w_m, w_0, w_p, lam, chunk, reverse)
        else:
            from gspn2.cuda import scan_forward_cuda

            h = scan_forward_cuda(
                x, w_m, w_0, w_p, lam, chunk, reverse, multilaunch=backend == "cuda_multilaunch"
            )
        ctx.save_for_backward(x, w_m, w_0, w_p, lam, h)
        ctx.chunk, ctx.reverse, ctx.backend = chunk, tuple(reverse), backend
        return h

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_h):  # noqa: D102
        x, w_m, w_0, w_p, lam, h = ctx.saved_tensors
        grad_h = grad_h.contiguous()
        if ctx.backend == "torch":
            grads = scan_backward_torch(grad_h, h, x, w_m, w_0, w_p, lam, ctx.chunk, ctx.reverse)
        else:
            from gspn2.cuda import scan_backward_cuda

            grads = scan_backward_cuda(
                grad_h,
                h,
                x,
                w_m,
                w_0,
                w_p,
                lam,
                ctx.chunk,
                ctx.reverse,
                multilaunch=ctx.backend == "cuda_multilaunch",
            )
        return (*grads, None, None, None)


def scan_naive(
    x: torch.Tensor,
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    chunk: int,
) -> torch.Tensor:
    """The left-to-right scan of (B, C, H, W) ``x`` pixel by pixel, straight from the definition

    h[c, r, i] = lam[c, r, i] x[c, r, i] + w_m[g, r, i] h[c, r-1, i-1]
                 + w_0[g, r, i] h[c, r, i-1] + w_p[g, r, i] h[c, r+1, i-1]

    with g = c // (C / G). Python scalars in nested lists, differentiable by plain autograd: the
    slow reference the vectorised and CUDA paths are tested against."""
    batch, channels, height, width = x.shape
    per_group = channels // w_m.shape[1]
    out = []
    for b in range(batch):
        planes = []
        for c in range(channels):
            g = c // per_group
            cols: list[list[torch.Tensor]] = []
            for i in range(width):
                col = []
                for r in range(height):
                    v = lam[b, c, r, i] * x[b, c, r, i]
                    if i % chunk:
                        prev = cols[i - 1]
                        v = v + w_0[b, g, r, i] * prev[r]
                        if r > 0:
                            v = v + w_m[b, g, r, i] * prev[r - 1]
                        if r + 1 < height:
                            v = v + w_p[b, g, r, i] * prev[r + 1]
                    col.append(v)
                cols.append(col)
            planes.append(torch.stack([torch.stack(col) for col in cols], dim=1))
        out.append(torch.stack(planes))
    return torch.stack(out)
