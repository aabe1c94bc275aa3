"""Fake quantisation: per-output-channel symmetric uniform weights (round to nearest) and
per-tensor 8-bit activations, with the straight-through estimator (STE) for QAT.

Weights at b >= 2 bits, per output channel c: :math:`s_c = \\max|w_c| / (2^{b-1} - 1)`,
:math:`Q(w) = s_c\\, \\mathrm{clip}(\\mathrm{round}(w / s_c), -(2^{b-1}-1), 2^{b-1}-1)`, so at most
:math:`2^b - 1` levels; at b = 1, :math:`Q(w) = \\mathrm{sign}(w)\\, \\mathrm{mean}|w_c|`.
Activations (the input of each quantised layer), per tensor and per batch:
:math:`s = (\\max x - \\min x)/(2^a - 1)`,
:math:`Q(x) = \\min x + s\\, \\mathrm{round}((x - \\min x)/s)`.
The STE passes gradients through the rounding:
:math:`\\hat w = \\mathrm{sg}(Q(w)) + w - \\mathrm{sg}(w)`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import torch
import torch.nn.functional as F
from torch import nn

from gmpqte.entropy import quantisable_layers
from paperkit import check_int, check_tensor, param_error

__all__ = ["QuantLayer", "quantize_activation", "quantize_model", "quantize_weight"]


def quantize_weight(w: torch.Tensor, bits: int) -> torch.Tensor:
    """Per-output-channel (axis 0) symmetric round-to-nearest fake quantisation at ``bits``, with
    the straight-through gradient.

    Any rank from 1 to 5; axis 0 indexes the output channels. NaN policy: NaN or infinite
    weights are refused.

    >>> w = torch.tensor([[0.5, -1.0, 0.2], [2.0, 0.1, -0.7]])  # round half to even
    >>> quantize_weight(w, 2).tolist()
    [[0.0, -1.0, 0.0], [2.0, 0.0, 0.0]]
    """
    check_tensor("w", "quantize_weight", w, ndim=(1, 2, 3, 4, 5))
    bits = check_int("bits", "quantize_weight", bits, low=1, high=32)
    flat = w.reshape(w.shape[0], -1)
    if bits == 1:
        q = torch.sign(flat) * flat.abs().mean(dim=1, keepdim=True)
    else:
        qmax = 2 ** (bits - 1) - 1
        scale = flat.abs().amax(dim=1, keepdim=True) / qmax
        safe = torch.where(scale > 0, scale, torch.ones_like(scale))
        q = torch.clamp(torch.round(flat / safe), -qmax, qmax) * safe
        q = torch.where(scale > 0, q, torch.zeros_like(q))
    q = q.reshape(w.shape)
    return q.detach() + (w - w.detach())  # the value of Q(w) exactly, the gradient of w


def quantize_activation(x: torch.Tensor, bits: int = 8) -> torch.Tensor:
    """Per-tensor asymmetric min-max fake quantisation of ``x`` at ``bits`` (range from this
    batch), with the straight-through gradient; any shape. NaN policy: NaN or infinite entries
    are refused.

    >>> quantize_activation(torch.tensor([0.0, 0.3, 1.0]), 2).tolist()
    [0.0, 0.3333333432674408, 1.0]
    """
    check_tensor("x", "quantize_activation", x)
    bits = check_int("bits", "quantize_activation", bits, low=1, high=32)
    return _fake_act(x, bits)


def _fake_act(x: torch.Tensor, bits: int) -> torch.Tensor:
    lo, hi = x.detach().min(), x.detach().max()
    scale = (hi - lo) / (2**bits - 1)
    if float(scale) <= 0:
        return x
    q = torch.round((x - lo) / scale) * scale + lo
    return q.detach() + (x - x.detach())


class QuantLayer(nn.Module):
    """A ``Conv2d`` or ``Linear`` computed with fake-quantised weights (``bits``) and inputs
    (``a_bits``, None: full precision). The full-precision weights stay the parameters, so QAT
    trains them through the STE."""

    def __init__(self, layer: nn.Module, bits: int, a_bits: int | None = 8) -> None:
        super().__init__()
        if not isinstance(layer, (nn.Conv2d, nn.Linear)):
            raise param_error(
                "layer", "QuantLayer", "a Conv2d or Linear", type(layer).__name__, cls=TypeError
            )
        self.layer = layer
        self.bits = check_int("bits", "QuantLayer", bits, low=1, high=32)
        self.a_bits = (
            None if a_bits is None else check_int("a_bits", "QuantLayer", a_bits, low=1, high=32)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.a_bits is not None:
            x = _fake_act(x, self.a_bits)
        w = quantize_weight(self.layer.weight, self.bits)
        if isinstance(self.layer, nn.Linear):
            return F.linear(x, w, self.layer.bias)
        conv = self.layer
        return F.conv2d(x, w, conv.bias, conv.stride, conv.padding, conv.dilation, conv.groups)


def quantize_model(
    model: nn.Module, policy: Mapping[str, int], a_bits: int | None = 8
) -> nn.Module:
    """A copy of ``model`` whose layers named in ``policy`` are :class:`QuantLayer` at their
    bit-width (inputs at ``a_bits``; None keeps activations in full precision). Layers not named
    stay in full precision. The original model is not changed.

    NaN policy: NaN or infinite weights are refused when the quantised model runs.

    >>> from gmpqte.models import small_cnn
    >>> q = quantize_model(small_cnn(), {"conv2": 2, "fc": 4})
    >>> type(q.conv2).__name__, q.fc.bits
    ('QuantLayer', 4)
    """
    owner = "quantize_model"
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "a torch.nn.Module", type(model).__name__, cls=TypeError)
    if not isinstance(policy, Mapping):
        raise param_error(
            "policy", owner, "a dict of layer name -> bits", type(policy).__name__, cls=TypeError
        )
    if not policy:
        raise param_error("policy", owner, "a non-empty dict of layer name -> bits", "{}")
    names = quantisable_layers(model)
    for name, bits in policy.items():
        if name not in names:
            raise param_error("policy", owner, f"layer names among {names}", name)
        check_int("policy", owner, bits, low=1, high=32)
    if a_bits is not None:
        a_bits = check_int("a_bits", owner, a_bits, low=1, high=32)
    out = copy.deepcopy(model)
    for name, bits in policy.items():
        parent_name, _, child = name.rpartition(".")
        parent = out.get_submodule(parent_name) if parent_name else out
        setattr(parent, child, QuantLayer(getattr(parent, child), int(bits), a_bits))
    return out
