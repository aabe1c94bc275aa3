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

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import (
    Described,
    check_bool,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    param_error,
)

__all__ = [
    "QuantLinear",
    "bit_width",
    "fake_quantize",
    "gptq_quantize",
    "quantize_act_per_token",
    "quantize_weight_rtn",
]


def bit_width(name: str, owner: str, value: Any, *, allow_none: bool = False) -> int | None:
    """A bit-width argument: an int in [2, 16] (``None`` too when ``allow_none``, meaning full
    precision)."""
    if allow_none and value is None:
        return None
    return check_int(name, owner, value, low=2, high=16)


def clip_ratio_arg(owner: str, name: str, value: Any) -> float:
    return check_real(name, owner, value, low=0, low_open=True, high=1)


def _quantizable(name: str, owner: str, x: Any) -> torch.Tensor:
    """A non-empty, finite floating tensor with at least one dimension (quantised along it)."""
    check_tensor(name, owner, x)
    if x.dim() == 0:
        raise param_error(name, owner, "at least 1-D [..., d]", Described("a 0-D tensor"))
    return x


def fake_quantize(
    x: torch.Tensor, bits: int, sym: bool = True, clip_ratio: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Quantise each slice along the last dim; return (dequantised x, scale, zero point).

    ``x``: a floating tensor ``[..., d]`` (computed in at least float32, returned in x's dtype).
    ``scale`` and ``zero`` have x's shape with the last dim 1 (zero is 0 when symmetric). The
    dequantised tensor passes gradients straight through to ``x``. NaN and inf are refused
    (one of them would set the scale of its whole slice).

    >>> fake_quantize(torch.tensor([0.0, 0.4, 1.0]), bits=2)[0]
    tensor([0., 0., 1.])
    """
    owner = "fake_quantize"
    _quantizable("x", owner, x)
    bits = bit_width("bits", owner, bits)
    sym = check_bool("sym", owner, sym)
    clip_ratio = clip_ratio_arg(owner, "clip_ratio", clip_ratio)
    return fake_quantize_core(x, bits, sym, clip_ratio)


def fake_quantize_core(
    x: torch.Tensor, bits: int, sym: bool, clip_ratio: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
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
    per group of ``group`` consecutive input columns. NaN and inf in ``W`` are refused."""
    owner = "quantize_weight_rtn"
    check_tensor("W", owner, W, shape=("out", "in"))
    bits = bit_width("bits", owner, bits)
    sym = check_bool("sym", owner, sym)
    group = _group(owner, "group", group, W.shape[1])
    return rtn_core(W, bits, group, sym)


def _group(owner: str, name: str, group: Any, in_features: int) -> int | None:
    if group is None:
        return None
    group = check_int(name, owner, group, low=1)
    if in_features % group:
        raise param_error(name, owner, f"a divisor of in_features={in_features}", group)
    return group


def rtn_core(W: torch.Tensor, bits: int, group: int | None, sym: bool) -> torch.Tensor:
    if group is None:
        return fake_quantize_core(W, bits, sym, 1.0)[0]
    out, n = W.shape
    return fake_quantize_core(W.reshape(out, n // group, group), bits, sym, 1.0)[0].reshape(out, n)


def quantize_act_per_token(
    x: torch.Tensor, bits: int = 4, clip_ratio: float = 0.9, sym: bool = False
) -> torch.Tensor:
    """Per-token (last dim) activation fake quantisation, asymmetric with range clipping.
    ``x``: a floating tensor ``[..., d]``; NaN and inf are refused."""
    owner = "quantize_act_per_token"
    _quantizable("x", owner, x)
    bits = bit_width("bits", owner, bits)
    clip_ratio = clip_ratio_arg(owner, "clip_ratio", clip_ratio)
    sym = check_bool("sym", owner, sym)
    return fake_quantize_core(x, bits, sym, clip_ratio)[0]


def gptq_quantize(
    W: torch.Tensor, H: torch.Tensor, bits: int = 4, sym: bool = True, percdamp: float = 0.01
) -> torch.Tensor:
    """GPTQ: per-output-channel b-bit quantisation of W[out, in] that minimises
    ||X W^T - X Ŵ^T||² given the input Hessian H = X^T X ([in, in]); returns Ŵ in W's dtype
    (computed in float64).

    Column i is rounded on the per-row grid of W, and its error e_i = (w_i - ŵ_i) / U_ii updates
    the columns j > i by -e_i U_ij, where U is the upper Cholesky factor of H^{-1}. As in GPTQ,
    inputs that never fire (H_ii = 0) get H_ii = 1 and a zero weight column, and H is damped by
    ``percdamp`` (> 0) times its mean diagonal. No further fallback: an H that is not symmetric,
    or not positive definite after that damping (no X^T X is indefinite), is refused with a
    ``ValueError`` naming ``H``. NaN and inf in ``W`` or ``H`` are refused.
    """
    owner = "gptq_quantize"
    dims: dict = {}
    check_tensor("W", owner, W, shape=("out", "in"), dims=dims)
    check_tensor("H", owner, H, shape=("in", "in"), dims=dims)
    bits = bit_width("bits", owner, bits)
    sym = check_bool("sym", owner, sym)
    percdamp = check_real("percdamp", owner, percdamp, low=0, low_open=True)
    n = W.shape[1]
    H = H.detach().double().clone()
    scale = H.abs().max().clamp_min(1e-300)
    asym = ((H - H.mT).abs().max() / scale).item()
    if asym > 1e-6:
        raise param_error(
            "H", owner, "symmetric (H = X^T X)", Described(f"max |H - H^T| / max |H| = {asym:.3g}")
        )
    Wq = W.detach().double().clone()
    dead = torch.diagonal(H) == 0
    H[dead, dead] = 1.0
    Wq[:, dead] = 0.0
    H += percdamp * torch.diagonal(H).mean() * torch.eye(n, dtype=H.dtype)
    L, info = torch.linalg.cholesky_ex(H)
    if info.item() != 0:
        smallest = torch.linalg.eigvalsh(H)[0].item()
        raise param_error(
            "H",
            owner,
            "positive semi-definite (H = X^T X), hence positive definite once damped by "
            f"percdamp={percdamp:g} times its mean diagonal",
            Described(f"a matrix whose damped smallest eigenvalue is {smallest:.3g}"),
        )
    U = torch.linalg.cholesky(torch.cholesky_inverse(L), upper=True)
    _, scale, zero = fake_quantize_core(Wq, bits, sym, 1.0)
    scale, zero = scale[:, 0], zero[:, 0]
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if sym else (0, 2**bits - 1)
    for i in range(n):
        w = Wq[:, i]
        q = (torch.clamp(torch.round(w / scale) + zero, lo, hi) - zero) * scale
        err = (w - q) / U[i, i]
        Wq[:, i:] -= err[:, None] * U[i, i:][None, :]
        Wq[:, i] = q
    return Wq.to(W.dtype)


class QuantLinear(nn.Module):
    """A linear layer with fake-quantised input and weight.

    forward(x) = Q_a(x) Q_w(W)^T (+ b, kept in full precision, when ``bias``) with Q_a per-token
    (``a_bits``, asymmetric, ``a_clip``) and Q_w RTN (``w_bits``, symmetric, per output channel
    or per ``w_group`` input columns); ``None`` keeps that side in full precision.
    ``weight_prequantized`` marks a weight already on its grid (GPTQ), used as is.

    Shapes: ``x`` is ``[..., in_features]`` (any leading dims) in the layer's dtype (another
    dtype is refused: convert the layer or the input with ``.to``); the output is
    ``[..., out_features]``. NaN and inf in ``x`` are refused.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        w_bits: int | None = 4,
        a_bits: int | None = 4,
        a_clip: float = 0.9,
        w_group: int | None = None,
        bias: bool = False,
    ) -> None:
        super().__init__()
        owner = "QuantLinear"
        in_features = check_int("in_features", owner, in_features, low=1)
        out_features = check_int("out_features", owner, out_features, low=1)
        larger = "in_features" if in_features >= out_features else "out_features"
        check_memory(larger, owner, max(in_features, out_features), 4 * in_features * out_features)
        self.in_features, self.out_features = in_features, out_features
        self.w_bits = bit_width("w_bits", owner, w_bits, allow_none=True)
        self.a_bits = bit_width("a_bits", owner, a_bits, allow_none=True)
        self.a_clip = clip_ratio_arg(owner, "a_clip", a_clip)
        self.w_group = _group(owner, "w_group", w_group, in_features)
        self.weight_prequantized = False
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        nn.init.normal_(self.weight, std=in_features**-0.5)
        self.bias = (
            nn.Parameter(torch.zeros(out_features)) if check_bool("bias", owner, bias) else None
        )

    @classmethod
    def from_linear(cls, linear: nn.Linear, **kw: Any) -> QuantLinear:
        """A QuantLinear holding a copy of ``linear``'s weight and bias."""
        if not isinstance(linear, nn.Linear):
            raise param_error(
                "linear",
                "QuantLinear.from_linear",
                "an nn.Linear",
                Described(f"a {type(linear).__name__}"),
                cls=TypeError,
            )
        q = cls(linear.in_features, linear.out_features, bias=linear.bias is not None, **kw)
        q = q.to(linear.weight.device, linear.weight.dtype)
        q.weight.data.copy_(linear.weight.data)
        if linear.bias is not None:
            q.bias.data.copy_(linear.bias.data)
        return q

    def quantized_weight(self) -> torch.Tensor:
        if self.w_bits is None or self.weight_prequantized:
            return self.weight
        return rtn_core(self.weight, self.w_bits, self.w_group, True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tensor("x", "QuantLinear", x, dtype=self.weight.dtype)
        if x.dim() == 0 or x.shape[-1] != self.in_features:
            raise param_error(
                "x",
                "QuantLinear",
                f"a tensor [..., {self.in_features}]",
                Described(f"a tensor of shape {tuple(x.shape)}"),
            )
        if self.a_bits is not None:
            x = fake_quantize_core(x, self.a_bits, False, self.a_clip)[0]
        return F.linear(x, self.quantized_weight(), self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"w_bits={self.w_bits}, a_bits={self.a_bits}, a_clip={self.a_clip}"
        )
