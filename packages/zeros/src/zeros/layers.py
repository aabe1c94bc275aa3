r"""The ZeroS attention layer.

For x of shape (B, T, D) with H heads of size d = D/H:

1. projections :math:`q, k, v, u = xW` (each D to D) and gate logits :math:`g = xW_g` (H x 3);
2. angular part: RoPE on q, k, then unit length, :math:`\cos_{t,i}=\hat q_t\cdot\hat k_i`;
3. radial logits, one scalar per key: ``"deviation"`` (default)
   :math:`s_i=-\langle u_i,\bar u_i\rangle/\sqrt d` with the running mean
   :math:`\bar u_i=(\tau\mu+\sum_{j\le i}u_j)/(\tau+i)`, learned :math:`\mu\in\mathbb R^d` (init 0)
   and :math:`\tau=\exp(\mathrm{clip}(\log\tau,-50,30))` (init 1) per head; ``"quadratic"``
   :math:`\lVert u_i\rVert^2/d`; ``"mean"`` :math:`\langle u_i,\mathbf 1\rangle/d`;
4. gates :math:`\sigma^1=\mathrm{sigmoid}(g_0)`, :math:`\sigma^h=\mathrm{sigmoid}(g_1)` and, on a
   first layer, :math:`\sigma^0=\tanh(g_2)`;
5. the attention operator (:func:`zeros.ops.zeros_attention`), per-head LayerNorm (no affine,
   eps 1e-5), merge, :math:`W_o`, dropout.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    param_error,
)
from zeros.ops import BACKENDS, Backend, _cast, _common_dtype, attend
from zeros.rope import RotaryEmbedding

__all__ = ["LOGIT_TYPES", "TERMS", "ZeroSAttention", "check_attention_args", "check_input"]

LOGIT_TYPES = ("deviation", "quadratic", "mean")
#: Which zero-sum terms a layer keeps: both (the method), or one of them (ablations).
TERMS = ("both", "first", "higher")


def check_attention_args(
    owner: str,
    dim: int,
    num_heads: int,
    max_seq_len: int,
    *,
    rope: bool,
    bias: bool,
    dropout: float,
    causal: bool,
    width: int,
) -> int:
    """Check the constructor arguments every attention layer shares; return the head size.

    ``width`` is the number of outputs of the input projection per unit of ``dim`` (the
    parameters then take ``(width + 1) * dim**2`` floats, refused when they would not fit).
    """
    dim = check_int("dim", owner, dim, low=1)
    num_heads = check_int("num_heads", owner, num_heads, low=1, high=dim)
    max_seq_len = check_int("max_seq_len", owner, max_seq_len, low=1)
    for name, flag in (("rope", rope), ("bias", bias), ("causal", causal)):
        check_bool(name, owner, flag)
    check_real("dropout", owner, dropout, low=0, high=1, high_open=True)
    if dim % num_heads:
        raise param_error("num_heads", owner, f"a divisor of dim={dim}", num_heads)
    if rope and (dim // num_heads) % 2:
        raise param_error("num_heads", owner, "such that dim/num_heads is even (RoPE)", num_heads)
    check_memory("dim", owner, dim, 4 * (width + 1) * dim * dim)
    if rope:  # the RoPE tables: cos and sin, (max_seq_len, d/2) float64 each
        check_memory("max_seq_len", owner, max_seq_len, 8 * max_seq_len * (dim // num_heads))
    return dim // num_heads


def check_input(owner: str, x: torch.Tensor, weight: torch.Tensor, max_seq_len: int | None):
    """Check a layer input: (B, T, D) with D the layer's width, the dtype and device of the
    layer's ``weight`` (or, under ``torch.autocast`` for that device, its low dtype), finite,
    and at most ``max_seq_len`` long (None: no limit)."""
    D = weight.shape[-1]
    dtypes = [weight.dtype]
    if torch.is_autocast_enabled(weight.device.type):
        dtypes.append(torch.get_autocast_dtype(weight.device.type))
    check_tensor("x", owner, x, shape=(None, None, D), dtype=tuple(dtypes), device=weight.device)
    if max_seq_len is not None and x.shape[1] > max_seq_len:
        raise param_error(
            "x",
            owner,
            f"at most max_seq_len={max_seq_len} long (RoPE is tabulated that far)",
            Described(f"a sequence of length {x.shape[1]}"),
        )


class ZeroSAttention(nn.Module):
    r"""Zero-sum linear attention (ZeroS), input and output (B, T, D).

    Args:
        dim: model width D.
        num_heads: H, a divisor of D.
        causal: prefix attention (True) or over the whole sequence.
        max_seq_len: longest sequence RoPE is tabulated for.
        rope: apply RoPE to q and k.
        use_norm: per-head LayerNorm on the attention output.
        first_layer: add the zero-order gate :math:`\sigma^0=\tanh(g_2)` (meant for a first layer).
        logit_type: ``"deviation"``, ``"quadratic"`` or ``"mean"`` radial logits.
        bias: biases in the projections.
        dropout: dropout after the output projection.
        backend: see :func:`zeros.ops.zeros_attention`.
        chunk_size: block length of the ``chunk`` backend (and of the ``triton`` backward).
        terms: ``"both"`` zero-sum terms (the method), or only ``"first"`` or ``"higher"`` (the
            other gate is held at 0), for ablations.

    Shapes:
        x: (B, T, D) with T <= ``max_seq_len`` when ``rope``. Returns (B, T, D).

    ``x`` must have the dtype and device of the layer's parameters (convert the layer with
    ``.to(...)``), or under ``torch.autocast`` its low dtype; NaN or inf in ``x`` is refused
    (ValueError). Under autocast the projections run in the low dtype and the attention
    operator, its logits and the LayerNorm in fp32. The attention runs on the
    ``backend`` asked for, resolved on each call for the input's device.

    >>> import torch
    >>> ZeroSAttention(dim=16, num_heads=2)(torch.randn(1, 5, 16)).shape
    torch.Size([1, 5, 16])
    """

    def __init__(
        self,
        dim: int,
        num_heads: int,
        *,
        causal: bool = True,
        max_seq_len: int = 2048,
        rope: bool = True,
        use_norm: bool = True,
        first_layer: bool = False,
        logit_type: Literal["deviation", "quadratic", "mean"] = "deviation",
        bias: bool = True,
        dropout: float = 0.0,
        backend: Backend = "auto",
        chunk_size: int = 64,
        terms: Literal["both", "first", "higher"] = "both",
    ) -> None:
        super().__init__()
        owner = "ZeroSAttention"
        self.head_dim = check_attention_args(
            owner,
            dim,
            num_heads,
            max_seq_len,
            rope=rope,
            bias=bias,
            dropout=dropout,
            causal=causal,
            width=4,
        )
        check_bool("use_norm", owner, use_norm)
        check_bool("first_layer", owner, first_layer)
        check_choice("logit_type", owner, logit_type, LOGIT_TYPES)
        check_choice("backend", owner, backend, BACKENDS)
        check_choice("terms", owner, terms, TERMS)
        chunk_size = check_int("chunk_size", owner, chunk_size, low=1)
        self.dim, self.num_heads, self.causal = dim, num_heads, causal
        self.max_seq_len, self.use_norm, self.first_layer = max_seq_len, use_norm, first_layer
        self.logit_type, self.backend, self.chunk_size = logit_type, backend, chunk_size
        self.terms = terms
        #: the longest input the layer takes (None: any length, without RoPE)
        self.max_positions = max_seq_len if rope else None
        # q, k, v, u (D each) and the 3 gate logits per head, in one matmul
        self.in_proj = nn.Linear(dim, 4 * dim + 3 * num_heads, bias=bias)
        self.out_proj = nn.Linear(dim, dim, bias=bias)
        self.dropout = nn.Dropout(dropout)
        self.rope = RotaryEmbedding(self.head_dim, max_seq_len) if rope else None
        self.mu = nn.Parameter(torch.zeros(num_heads, self.head_dim))
        self.log_tau = nn.Parameter(torch.zeros(num_heads))
        self.reset_parameters()

    def reset_parameters(self, out_std: float = 0.02) -> None:
        """GPT-2 initialisation: weights N(0, 0.02), ``out_proj`` N(0, out_std), biases 0."""
        nn.init.normal_(self.in_proj.weight, std=0.02)
        nn.init.normal_(self.out_proj.weight, std=out_std)
        for lin in (self.in_proj, self.out_proj):
            if lin.bias is not None:
                nn.init.zeros_(lin.bias)
        nn.init.zeros_(self.mu)
        nn.init.zeros_(self.log_tau)

    def radial_logits(self, u: torch.Tensor) -> torch.Tensor:
        """Per-key scalar logits s (B, T, H) from u (B, T, H, d), computed in fp32 at least
        (a 16-bit running mean and position counter drift: bf16 counts exactly only to 256)
        and returned in the dtype of u and the parameters promoted (fp32 under autocast)."""
        d = self.head_dim
        dtype = torch.promote_types(u.dtype, self.mu.dtype)
        u = u.to(torch.promote_types(dtype, torch.float32))
        return self._radial_logits(u, d).to(dtype)

    def _radial_logits(self, u: torch.Tensor, d: int) -> torch.Tensor:
        if self.logit_type == "quadratic":
            return u.pow(2).sum(-1) / d
        if self.logit_type == "mean":
            return u.sum(-1) / d
        tau = self.log_tau.to(u.dtype).clamp(-50.0, 30.0).exp().view(1, 1, -1, 1)
        prior = tau * self.mu.to(u.dtype).view(1, 1, *self.mu.shape)
        T = u.shape[1]
        if self.causal:
            count = torch.arange(1, T + 1, dtype=u.dtype, device=u.device).view(1, T, 1, 1)
            mean = (prior + u.cumsum(dim=1)) / (tau + count)
        else:
            mean = (prior + u.sum(dim=1, keepdim=True)) / (tau + T)
        return -(u * mean).sum(-1) / math.sqrt(d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        owner = "ZeroSAttention"
        check_input(owner, x, self.out_proj.weight, self.max_positions)
        B, T, D = x.shape
        H, d = self.num_heads, self.head_dim
        proj = self.in_proj(x)
        q, k, v, u = proj[..., : 4 * D].view(B, T, 4, H, d).unbind(2)
        g = proj[..., 4 * D :].view(B, T, H, 3)
        if self.rope is not None:
            q, k = self.rope(q), self.rope(k)
        s = self.radial_logits(u)
        gate1, gateh = torch.sigmoid(g[..., 0]), torch.sigmoid(g[..., 1])
        if self.terms == "first":
            gateh = torch.zeros_like(gateh)
        elif self.terms == "higher":
            gate1 = torch.zeros_like(gate1)
        gate0 = torch.tanh(g[..., 2]) if self.first_layer else None
        # one dtype for the operator: under autocast the projections are in its low dtype and
        # the logits in fp32 (the parameters' dtype), so the operator runs in fp32
        dtype = _common_dtype(q, s, gate1)
        o = attend(
            *_cast(dtype, q, k, v, s, gate1, gateh, gate0),
            causal=self.causal,
            backend=self.backend,
            chunk_size=self.chunk_size,
            owner=owner,
            names=("x", "x"),
        )
        if self.use_norm:
            o = F.layer_norm(o, (d,), eps=1e-5)
        return self.dropout(self.out_proj(o.reshape(B, T, D)))
