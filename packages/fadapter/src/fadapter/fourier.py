r"""The AFNO Fourier mixing of DPOT (paper, Sec. 3, eq. of the Fourier layer), as one function.

For a channel-last input :math:`x \in \mathbb{R}^{B\times H\times W\times C}` with ``nb`` channel
blocks of size ``c = C/nb``:

.. math::
    X = \mathrm{rfft2}(x),\quad
    O_1 = \mathrm{GELU}(X_{\mathcal K} W_1 + b_1),\quad O_2 = O_1 W_2 + b_2,\quad
    y = \mathrm{irfft2}(O_2 \text{ on } \mathcal K,\ 0 \text{ elsewhere}) + x,

with the complex block-diagonal products written on real and imaginary parts
(:math:`\Re(XW) = X_r W_r - X_i W_i`, :math:`\Im(XW) = X_i W_r + X_r W_i`, GELU applied to each
part) and ``norm="ortho"`` FFTs. ``adapt(position, re, im)`` inserts adapters at ``"in"`` (on
:math:`X_{\mathcal K}`), ``"mid"`` (on :math:`O_1`) and ``"out"`` (on :math:`O_2`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

__all__ = ["spectral_mix"]

Adapt = Callable[[str, torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def _cmul(re: torch.Tensor, im: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Block-diagonal complex product of (B, M, nb, i) parts with w (2, nb, i, o)."""
    rr = torch.einsum("bmni,nio->bmno", re, w[0]) - torch.einsum("bmni,nio->bmno", im, w[1])
    ii = torch.einsum("bmni,nio->bmno", im, w[0]) + torch.einsum("bmni,nio->bmno", re, w[1])
    return rr, ii


def spectral_mix(
    x: torch.Tensor,
    w1: torch.Tensor,
    b1: torch.Tensor,
    w2: torch.Tensor,
    b2: torch.Tensor,
    rows: torch.Tensor,
    cols: torch.Tensor,
    adapt: Adapt | None = None,
) -> torch.Tensor:
    """The Fourier mixing on the modes ``(rows, cols)`` of the rfft2 grid, plus the skip.

    Shapes: x (B, H, W, C); w1 (2, nb, c, c·h), b1 (2, nb, c·h), w2 (2, nb, c·h, c),
    b2 (2, nb, c); rows, cols (M,) long. Inputs are not checked here (the layers do).
    The FFTs run in float32 at least (torch has no half-precision FFT for every size), so the
    layer works under ``torch.autocast``; the output has x's dtype.
    """
    B, H, W, C = x.shape
    nb = w1.shape[1]
    fdtype = torch.promote_types(x.dtype, torch.float32)
    X = torch.fft.rfft2(x.to(fdtype), dim=(1, 2), norm="ortho")
    Xk = X[:, rows, cols].reshape(B, -1, nb, C // nb)
    re, im = Xk.real, Xk.imag
    if adapt is not None:
        re, im = adapt("in", re, im)
    o1r, o1i = _cmul(re, im, w1)
    o1r, o1i = F.gelu(o1r + b1[0]), F.gelu(o1i + b1[1])
    if adapt is not None:
        o1r, o1i = adapt("mid", o1r, o1i)
    o2r, o2i = _cmul(o1r, o1i, w2)
    o2r, o2i = o2r + b2[0], o2i + b2[1]
    if adapt is not None:
        o2r, o2i = adapt("out", o2r, o2i)
    out = X.new_zeros(X.shape)
    out[:, rows, cols] = torch.complex(o2r.to(fdtype), o2i.to(fdtype)).reshape(B, -1, C)
    y = torch.fft.irfft2(out, s=(H, W), dim=(1, 2), norm="ortho")
    return (y + x.to(fdtype)).to(x.dtype)
