r"""The ``scan`` backend: the line scan in torch, a loop over the L lines vectorised over the
batch, the direction slots' channels and the S pixels of a line.

``forward`` and ``backward`` (the adjoint scan) work on the line layout of :mod:`gspn2.layout`,
whose docstring gives the recurrence and its adjoint; :class:`gspn2.layout.LineScan` makes them one
autograd Function. About √N sequential steps of O(√N) work each for an N-pixel square map.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["backward", "forward"]


def _grouped(t: torch.Tensor, groups: int) -> torch.Tensor:
    """(N, C, L, S) -> (N, G, C/G, L, S): the channels of each weight group together."""
    n, c, l, s = t.shape
    return t.view(n, groups, c // groups, l, s)


def _order(length: int, rev: bool) -> list[int]:
    """The lines in scan order."""
    return list(range(length - 1, -1, -1)) if rev else list(range(length))


def forward(
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


def backward(
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
