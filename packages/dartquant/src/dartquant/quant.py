"""Fake quantisation: RTN weights, GPTQ weights, per-token activations, KV cache, QuantLinear.

Uniform b-bit quantisation of a vector v (one weight row / group, one token, one head of K or V):

- symmetric: s = max|v| / (2^{b-1} - 1), q = clamp(round(v / s), -2^{b-1}, 2^{b-1} - 1), v̂ = s q;
- asymmetric: s = (max v - min v) / (2^b - 1), z = round(-min v / s),
  q = clamp(round(v / s) + z, 0, 2^b - 1), v̂ = s (q - z);

with the range shrunk by ``clip_ratio`` first for activations. Without clipping every element is
within s/2 of its value. The outputs are "fake quantised" (dequantised floats) and pass gradients
straight through (v + (v̂ - v).detach()), which SpinQuant-style end-to-end training needs.
GPTQ (Frantar et al., 2023) quantises the columns of W in order and spreads each column's error
over the remaining ones through the inverse Hessian H = 2 X^T X of the layer's inputs.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import Described, param_error

__all__ = [
    "QuantLinear",
    "check_bits",
    "fake_quantize",
    "gptq_quantize",
    "quantize_act_per_token",
    "quantize_weight_rtn",
]


def check_bits(bits: int, owner: str, param: str = "bits") -> int:
    """Return ``bits`` if it is an int in [2, 16], else raise the worded ValueError."""
    if isinstance(bits, bool) or not isinstance(bits, int) or not 2 <= bits <= 16:
        raise param_error(param, owner, "an int between 2 and 16", bits)
    return bits


def _check_clip(clip_ratio: float, owner: str) -> None:
    if not 0 < clip_ratio <= 1:
        raise param_error("clip_ratio", owner, "in (0, 1]", clip_ratio)


def fake_quantize(
    x: torch.Tensor, bits: int, sym: bool = True, clip_ratio: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Quantise each slice along the last dim; return (dequantised x, scale, zero point).

    ``scale`` and ``zero`` have x's shape with the last dim 1 (zero is 0 when symmetric). The
    dequantised tensor passes gradients straight through to ``x``.
    """
    check_bits(bits, "fake_quantize")
    _check_clip(clip_ratio, "fake_quantize")
    xf = x.detach().to(torch.promote_types(x.dtype, torch.float32))
    if sym:
        qmax = 2 ** (bits - 1) - 1
        scale = (xf.abs().amax(-1, keepdim=True) * clip_ratio / qmax).clamp_min(1e-8)
        zero = torch.zeros_like(scale)
        q = torch.clamp(torch.round(xf / scale), -qmax - 1, qmax)
    else:
        levels = 2**bits - 1
        hi = xf.amax(-1, keepdim=True).clamp_min(0) * clip_ratio
        lo = xf.amin(-1, keepdim=True).clamp_max(0) * clip_ratio
        scale = ((hi - lo) / levels).clamp_min(1e-8)
        zero = torch.round(-lo / scale)
        q = torch.clamp(torch.round(xf / scale) + zero, 0, levels) - zero
    deq = (q * scale).to(x.dtype)
    return x + (deq - x).detach(), scale, zero


def quantize_weight_rtn(
    W: torch.Tensor, bits: int = 4, group: int | None = None, sym: bool = True
) -> torch.Tensor:
    """Round-to-nearest fake quantisation of W[out, in], per output channel (``group=None``) or
    per group of ``group`` consecutive input columns."""
    check_bits(bits, "quantize_weight_rtn")
    if not isinstance(W, torch.Tensor) or W.dim() != 2:
        raise param_error(
            "W", "quantize_weight_rtn", "a 2-D tensor [out, in]", Described(_shape(W))
        )
    if group is None:
        return fake_quantize(W, bits, sym)[0]
    if isinstance(group, bool) or not isinstance(group, int) or group < 1 or W.shape[1] % group:
        raise param_error(
            "group", "quantize_weight_rtn", f"a positive divisor of in_features={W.shape[1]}", group
        )
    out, n = W.shape
    return fake_quantize(W.reshape(out, n // group, group), bits, sym)[0].reshape(out, n)


def quantize_act_per_token(
    x: torch.Tensor, bits: int = 4, clip_ratio: float = 0.9, sym: bool = False
) -> torch.Tensor:
    """Per-token (last dim) activation fake quantisation, asymmetric with range clipping."""
    check_bits(bits, "quantize_act_per_token")
    _check_clip(clip_ratio, "quantize_act_per_token")
    return fake_quantize(x, bits, sym, clip_ratio)[0]


def gptq_quantize(
    W: torch.Tensor, H: torch.Tensor, bits: int = 4, sym: bool = True, percdamp: float = 0.01
) -> torch.Tensor:
    """GPTQ: per-output-channel b-bit quantisation of W[out, in] that minimises
    ||X W^T - X Ŵ^T||² given the input Hessian H = X^T X ([in, in]); returns Ŵ (float).

    Column i is rounded on the per-row grid of W, and its error e_i = (w_i - ŵ_i) / U_ii updates
    the columns j > i by -e_i U_ij, where U is the upper Cholesky factor of H^{-1} (H damped by
    ``percdamp`` times its mean diagonal).
    """
    check_bits(bits, "gptq_quantize")
    if not isinstance(W, torch.Tensor) or W.dim() != 2:
        raise param_error("W", "gptq_quantize", "a 2-D tensor [out, in]", Described(_shape(W)))
    n = W.shape[1]
    if not isinstance(H, torch.Tensor) or H.shape != (n, n):
        raise param_error(
            "H", "gptq_quantize", f"a tensor of shape ({n}, {n})", Described(_shape(H))
        )
    Wq = W.detach().double().clone()
    H = H.detach().double().clone()
    dead = torch.diagonal(H) == 0
    H[dead, dead] = 1.0
    Wq[:, dead] = 0.0
    H += percdamp * torch.diagonal(H).mean() * torch.eye(n, dtype=H.dtype)
    U = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(H)), upper=True)
    _, scale, zero = fake_quantize(Wq, bits, sym)
    scale, zero = scale[:, 0], zero[:, 0]
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if sym else (0, 2**bits - 1)
    for i in range(n):
        w = Wq[:, i]
        q = (torch.clamp(torch.round(w / scale) + zero, lo, hi) - zero) * scale
        err = (w - q) / U[i, i]
        Wq[:, i:] -= err[:, None] * U[i, i:][None, :]
        Wq[:, i] = q
    return Wq.to(W.dtype)


def _shape(x: object) -> str:
    return f"shape {tuple(x.shape)}" if isinstance(x, torch.Tensor) else type(x).__name__


class QuantLinear(nn.Module):
    """A bias-free linear layer with fake-quantised input and weight, for (batch, seq, d) inputs.

    forward(x) = Q_a(x) Q_w(W)^T with Q_a per-token (``a_bits``, asymmetric, ``a_clip``) and Q_w
    per-output-channel symmetric RTN (``w_bits``); ``None`` keeps that side in full precision.
    ``weight_prequantized`` marks a weight already on its grid (GPTQ), used as is.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        w_bits: int | None = 4,
        a_bits: int | None = 4,
        a_clip: float = 0.9,
        w_group: int | None = None,
    ) -> None:
        super().__init__()
        if w_bits is not None:
            check_bits(w_bits, "QuantLinear", "w_bits")
        if a_bits is not None:
            check_bits(a_bits, "QuantLinear", "a_bits")
        _check_clip(a_clip, "QuantLinear")
        self.in_features, self.out_features = in_features, out_features
        self.w_bits, self.a_bits, self.a_clip, self.w_group = w_bits, a_bits, a_clip, w_group
        self.weight_prequantized = False
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        nn.init.normal_(self.weight, std=in_features**-0.5)

    @classmethod
    def from_linear(cls, linear: nn.Linear, **kw) -> QuantLinear:
        """A QuantLinear holding a copy of ``linear``'s weight (which must have no bias)."""
        if not isinstance(linear, nn.Linear) or linear.bias is not None:
            raise param_error(
                "linear",
                "QuantLinear.from_linear",
                "a bias-free nn.Linear",
                type(linear).__name__,
                cls=TypeError,
            )
        q = cls(linear.in_features, linear.out_features, **kw)
        q.weight.data.copy_(linear.weight.data)
        return q.to(linear.weight.device)

    def quantized_weight(self) -> torch.Tensor:
        if self.w_bits is None or self.weight_prequantized:
            return self.weight
        return quantize_weight_rtn(self.weight, self.w_bits, self.w_group)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.in_features:
            raise param_error(
                "x",
                "QuantLinear",
                f"a tensor with last dim {self.in_features}",
                Described(_shape(x)),
            )
        if self.a_bits is not None:
            x = quantize_act_per_token(x, self.a_bits, self.a_clip)
        return F.linear(x, self.quantized_weight())

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"w_bits={self.w_bits}, a_bits={self.a_bits}, a_clip={self.a_clip}"
        )
