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
from paperkit import (
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = ["BiasedAttention"]

BIAS_KINDS = ("alibi", "distance", "svd", "neural", None)


class BiasedAttention(nn.Module):
    """Multi-head self-attention with a low-rank bias folded into the fused kernel (module doc).

    Args:
        dim: model width D, a multiple of ``heads``.
        heads: number of heads H.
        bias_kind: ``"alibi"``, ``"distance"``, ``"svd"``, ``"neural"`` or None.
        rank: the factor rank R of the ``svd`` and ``neural`` kinds (``svd``: None picks R from
            the energy in :meth:`set_static_bias`; ``neural``: None is 96, as the official code).
        backend: the backend of :func:`flashbias.flash_bias_attention`.

    Shapes:
        forward(x, coords=None, features=None): x (B, N, D) in the layer's dtype; coords
            (B, N, c) for ``distance``; features (B, N, D) for ``neural`` (default x); both cast
            to x's dtype. Returns (B, N, D).

    NaN policy: non-finite x, coords, features or static bias are refused.
    """

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
        heads = check_int("heads", owner, heads, low=1)
        dim = check_int("dim", owner, dim, low=1)
        if dim % heads:
            raise param_error("dim", owner, f"a multiple of heads={heads}", dim)
        check_memory("dim", owner, dim, 4 * 4 * dim * dim)
        check_choice("bias_kind", owner, bias_kind, BIAS_KINDS)
        if rank is not None:
            rank = check_int("rank", owner, rank, low=1)
        check_choice("backend", owner, backend, BACKENDS)
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
            self.factorizer = NeuralFactorizer(dim, dim, heads, rank=rank or 96)
        self.register_buffer("q_static", None)
        self.register_buffer("k_static", None)

    def set_static_bias(self, bias: torch.Tensor, energy: float = 0.995) -> int:
        """Factorise a static (H, N, N) bias once by SVD (``rank`` or ``energy``); return R."""
        owner = "BiasedAttention.set_static_bias"
        if self.bias_kind != "svd":
            raise param_error("bias_kind", owner, "'svd'", self.bias_kind)
        check_tensor("bias", owner, bias, shape=(self.heads, "N", "N"))
        if self.rank is not None and self.rank > bias.shape[1]:
            expected = f"at least rank={self.rank} positions"
            raise param_error("bias", owner, expected, describe(bias))
        energy = check_real("energy", owner, energy, low=0, low_open=True, high=1)
        q_b, k_b, R = svd_factors(bias, rank=self.rank, energy=energy)
        self.q_static, self.k_static = q_b, k_b
        return R

    def factors(
        self,
        x: torch.Tensor,
        coords: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """The bias factors (B|1, N, H, R) for input x (B, N, D), checked as in :meth:`forward`."""
        owner = "BiasedAttention"
        param = self.qkv.weight
        dims: dict = {}
        check_tensor("x", owner, x, shape=("B", "N", self.dim), dims=dims, device=param.device)
        if x.dtype != param.dtype:
            expected = f"of the layer's dtype ({param.dtype})"
            raise param_error("x", owner, expected, describe(x), cls=TypeError)
        for name, given in (("coords", coords), ("features", features)):
            wanted = {"coords": "distance", "features": "neural"}[name]
            if given is not None and self.bias_kind != wanted:
                expected = f"None for bias_kind={self.bias_kind!r} (it is read by {wanted!r})"
                raise param_error(name, owner, expected, describe(given))
        N = x.shape[1]
        if self.bias_kind is None:
            return None, None
        if self.bias_kind == "alibi":
            q_b, k_b = alibi_factors(N, self.heads)
        elif self.bias_kind == "distance":
            if coords is None:
                raise param_error("coords", owner, "a (B, N, c) tensor for 'distance'", None)
            check_tensor("coords", owner, coords, shape=("B", "N", None), dims=dims)
            coords = coords.to(device=x.device, dtype=x.dtype)
            weight = F.softplus(self.log_weight)
            q_b, k_b = distance_factors(coords, coords, weight, drop_row_constant=True)
        elif self.bias_kind == "svd":
            if self.q_static is None:
                raise param_error("x", owner, "given after set_static_bias", describe(x))
            if self.q_static.shape[1] != N:
                expected = f"of the length {self.q_static.shape[1]} given to set_static_bias"
                raise param_error("x", owner, expected, describe(x))
            q_b, k_b = self.q_static, self.k_static
        else:
            if features is None:
                features = x
            check_tensor("features", owner, features, shape=("B", "N", self.dim), dims=dims)
            features = features.to(device=x.device, dtype=x.dtype)
            q_b, k_b = self.factorizer(features, features)
        return q_b.to(x), k_b.to(x)

    def forward(
        self,
        x: torch.Tensor,
        *,
        coords: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """(B, N, D) -> (B, N, D); ALiBi attends causally."""
        q_b, k_b = self.factors(x, coords, features)
        B, N, _ = x.shape
        q, k, v = self.qkv(x).unflatten(-1, (3, self.heads, -1)).unbind(2)
        out = flash_bias_attention(
            q, k, v, q_b, k_b, causal=self.bias_kind == "alibi", backend=self.backend
        )
        return self.proj(out.reshape(B, N, self.dim))
