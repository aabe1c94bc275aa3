r"""The reference backend: one scan pixel by pixel, straight from the recurrence.

Left to right over the columns i = 0..W-1 of ``x`` (B, C, H, W), per channel c and row r,

.. math::

    h[c, r, i] = \lambda[c, r, i]\, x[c, r, i] + w^-[g, r, i]\, h[c, r-1, i-1]
               + w^0[g, r, i]\, h[c, r, i-1] + w^+[g, r, i]\, h[c, r+1, i-1],

with g = c // (C / G), out-of-range neighbours and :math:`h[\cdot, \cdot, -1]` being 0, and the
recurrence restarting (h = 0) at every column i with i % chunk == 0. The other directions are the
same loop on the flipped and/or transposed planes. Python scalars in nested lists, differentiable
by plain autograd: slow, and the path every fast backend is tested against.
"""

from __future__ import annotations

import torch

__all__ = ["scan_reference"]


def _scan_lr(
    x: torch.Tensor,
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    chunk: int,
) -> torch.Tensor:
    """The → scan of (B, C, H, W) ``x`` with (B, G, H, W) weights, pixel by pixel."""
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


def scan_reference(
    x: torch.Tensor,
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    chunk: int | None,
    direction: str,
) -> torch.Tensor:
    """One scan in ``direction`` (``"lr"``, ``"rl"``, ``"tb"``, ``"bt"``) through the → loop:
    ← flips the columns, ↓ transposes the planes, ↑ does both. Inputs as in
    :func:`gspn2.gspn_scan` (already checked); returns h (B, C, H, W)."""
    vertical, backwards = direction in ("tb", "bt"), direction in ("rl", "bt")

    def to(t: torch.Tensor) -> torch.Tensor:
        t = t.transpose(-1, -2) if vertical else t
        return t.flip(-1) if backwards else t

    def back(t: torch.Tensor) -> torch.Tensor:
        t = t.flip(-1) if backwards else t
        return t.transpose(-1, -2) if vertical else t

    lines = x.shape[-2] if vertical else x.shape[-1]
    return back(_scan_lr(to(x), to(w_m), to(w_0), to(w_p), to(lam), chunk or lines))
