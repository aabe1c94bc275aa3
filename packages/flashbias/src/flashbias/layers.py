r"""``BiasedAttention``: multi-head self-attention on (B, N, D) with a FlashBias bias.

.. math::
    \mathrm{Attn}(X) = \mathrm{softmax}\big(QK^\top/\sqrt{d} + \phi_q\phi_k^\top\big)V\,W_o

where the factors come from the chosen ``bias_kind``: ``"alibi"`` (exact, causal),
``"distance"`` (exact, learned per-head weight on :math:`-\|x_i-x_j\|^2`, coordinates passed as
``coords``), ``"svd"`` (a static bias set once with :meth:`BiasedAttention.set_static_bias`),
``"neural"`` (a :class:`~flashbias.decompose.NeuralFactorizer` on the tokens, or on the
``features`` keyword), or ``None`` (no bias).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from flashbias.attention import BACKENDS, flash_bias_attention
from flashbias.decompose import NeuralFactorizer, alibi_factors, distance_factors, svd_factors
from paperkit import check_choice, param_error

__all__ = ["BiasedAttention"]

BIAS_KINDS = ("alibi", "distance", "svd", "neural", None)


class BiasedAttention(nn.Module):
    """Multi-head attention with a low-rank bias folded into the fused kernel; see module doc."""

    def __init__(
        self,
        dim: int,
        heads: int,
        bias_kind: str | None = "alibi",
        rank: int | None = None,
        backend: str = "auto",
    ):
        super().__init__()
        owner = "BiasedAttention"
        check_choice("bias_kind", owner, bias_kind, BIAS_KINDS)
        check_choice("backend", owner, backend, BACKENDS)
        if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
            raise param_error("heads", owner, "a positive integer", heads)
        if isinstance(dim, bool) or not isinstance(dim, int) or dim % heads:
            raise param_error("dim", owner, f"a positive multiple of heads={heads}", dim)
        self.dim, self.heads, self.bias_kind, self.rank, self.backend = (
            dim,
            heads,
            bias_kind,
            rank,
            backend,
        )
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        if bias_kind == "distance":
            self.log_weight = nn.Parameter(torch.zeros(heads))
        if bias_kind == "neural":
            self.factorizer = NeuralFactorizer(dim, dim, heads, rank=rank or 32)
        self.register_buffer("q_static", None)
        self.register_buffer("k_static", None)

    def set_static_bias(self, bias: torch.Tensor, energy: float = 0.995) -> int:
        """Factorise a static (H, N, N) bias once by SVD (``rank`` or ``energy``); return R."""
        if self.bias_kind != "svd":
            raise param_error(
                "bias_kind", "BiasedAttention.set_static_bias", "'svd'", self.bias_kind
            )
        q_b, k_b, R = svd_factors(bias, rank=self.rank, energy=energy)
        self.q_static, self.k_static = q_b, k_b
        return R

    def factors(
        self,
        x: torch.Tensor,
        coords: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """The bias factors (B|1, N, H, R) for input x (B, N, D)."""
        owner = "BiasedAttention.forward"
        N = x.shape[1]
        if self.bias_kind is None:
            return None, None
        if self.bias_kind == "alibi":
            q_b, k_b = alibi_factors(N, self.heads)
        elif self.bias_kind == "distance":
            if coords is None:
                raise param_error("coords", owner, "a (B, N, c) tensor for 'distance'", None)
            weight = F.softplus(self.log_weight)
            q_b, k_b = distance_factors(coords, coords, weight, drop_row_constant=True)
        elif self.bias_kind == "svd":
            if self.q_static is None or self.q_static.shape[1] != N:
                raise param_error(
                    "x", owner, "of the length given to set_static_bias", tuple(x.shape)
                )
            q_b, k_b = self.q_static, self.k_static
        else:
            f = x if features is None else features
            q_b, k_b = self.factorizer(f, f)
        return q_b.to(x), k_b.to(x)

    def forward(
        self,
        x: torch.Tensor,
        *,
        coords: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """(B, N, D) -> (B, N, D); ALiBi attends causally."""
        if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != self.dim:
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise param_error("x", "BiasedAttention.forward", f"a (B, N, {self.dim}) tensor", got)
        B, N, _ = x.shape
        q, k, v = self.qkv(x).unflatten(-1, (3, self.heads, -1)).unbind(2)
        q_b, k_b = self.factors(x, coords, features)
        out = flash_bias_attention(
            q, k, v, q_b, k_b, causal=self.bias_kind == "alibi", backend=self.backend
        )
        return self.proj(out.reshape(B, N, self.dim))
