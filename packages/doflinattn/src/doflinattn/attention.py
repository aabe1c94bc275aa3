r"""Linear attention with learned feature maps (the student of the paper's Sec. 4).

.. math::
    o_i = \frac{\phi(q_i)^\top \sum_{j} \phi(k_j) v_j^\top}{\phi(q_i)^\top \sum_j \phi(k_j)
    + \varepsilon},

the sum over all non-padded keys (encoders: two matmuls) or over :math:`j \le i` (causal:
prefix sums; the ``triton`` backend is a chunked kernel). The cost is O(N m e) per head instead
of softmax attention's O(N^2 e), so a layer's feature dimension m is its inference cost.
"""

from __future__ import annotations

import torch
from torch import nn

from doflinattn.features import HedgehogFeatureMap, per_head
from doflinattn.kernels import (
    causal_hedgehog_attention_triton,
    causal_linear_attention_triton,
    feature_plan,
    hedgehog_plan,
    kernel_dtype,
    triton_supported,
)
from doflinattn.reference import linear_attention_features
from paperkit import (
    check_bool,
    check_choice,
    check_real,
    check_tensor,
    param_error,
    resolve_backend,
)

__all__ = ["LinearAttention", "apply_feature_map"]


def apply_feature_map(feature_map: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``feature_map`` on (B, H, N, d): a module applied to every head, or an ``nn.ModuleList``
    with one map per head (head h gets ``feature_map[h]``)."""
    if isinstance(feature_map, nn.ModuleList):
        if len(feature_map) != x.shape[1]:
            raise param_error(
                "feature_map_q",
                "LinearAttention",
                f"one map per head ({x.shape[1]})",
                len(feature_map),
            )
        return per_head(feature_map, x)
    return feature_map(x)


class LinearAttention(nn.Module):
    r"""Normalised linear attention :math:`o = \phi(Q)(\phi(K)^\top V) / (\phi(Q)\phi(K)^\top
    \mathbf 1 + \varepsilon)`, non-causal or causal.

    Args:
        feature_map_q: the query map, (..., d) -> (..., m) with values >= 0; or an
            ``nn.ModuleList`` of one map per head.
        feature_map_k: the key map (default: the query map, shared as in Hedgehog).
        causal: sum over :math:`j \le i` only.
        eps: added to the denominator.
        backend: ``"reference"`` (torch: two matmuls, or prefix sums when causal),
            ``"triton"`` (causal only: the chunked kernel, on CUDA or under
            ``TRITON_INTERPRET=1``), or ``"auto"`` (``triton`` for causal CUDA inputs when
            Triton is installed, else ``reference``). The kernel takes features of width
            m <= 128 in fp32, fp16 or bf16 (:func:`doflinattn.kernels.feature_plan`: only
            launch configurations the static kernel gate compiles without spills); ``auto``
            routes other shapes to ``reference``, and ``triton`` refuses them.
        fused_prologue: with the ``triton`` backend, compute the hedgehog features inside the
            kernel (a small matmul and two softmaxes per chunk) instead of in torch before it;
            needs one :class:`~doflinattn.features.HedgehogFeatureMap` (or a per-head
            ``nn.ModuleList`` of them, one size) shared by queries and keys. The result is the
            same; other backends ignore it, and shapes the fused kernel does not take
            (d > 64, m > 128, or a padded d x m/2 tile over 2048 entries:
            :func:`doflinattn.kernels.hedgehog_plan`) run the kernel on features.

    Shapes: ``q``, ``k`` (B, H, N, d), ``v`` (B, H, N, e), ``key_padding_mask`` (B, N) bool,
    True marking a padding key that is ignored (PyTorch's convention) -> (B, H, N, e).
    NaN and inf in q, k, v are refused.

    >>> from doflinattn.features import HedgehogFeatureMap
    >>> attn = LinearAttention(HedgehogFeatureMap(8, 16))
    >>> q = k = v = torch.randn(2, 3, 5, 8)
    >>> attn(q, k, v).shape
    torch.Size([2, 3, 5, 8])
    """

    def __init__(
        self,
        feature_map_q: nn.Module,
        feature_map_k: nn.Module | None = None,
        causal: bool = False,
        eps: float = 1e-6,
        backend: str = "auto",
        fused_prologue: bool = False,
    ) -> None:
        super().__init__()
        owner = "LinearAttention"
        if not isinstance(feature_map_q, nn.Module):
            raise param_error(
                "feature_map_q", owner, "an nn.Module", type(feature_map_q).__name__, cls=TypeError
            )
        if feature_map_k is not None and not isinstance(feature_map_k, nn.Module):
            raise param_error(
                "feature_map_k",
                owner,
                "an nn.Module or None",
                type(feature_map_k).__name__,
                cls=TypeError,
            )
        self.feature_map_q = feature_map_q
        self.feature_map_k = feature_map_k
        self.causal = check_bool("causal", owner, causal)
        self.eps = check_real("eps", owner, eps, low=0.0, low_open=True, high=1.0)
        self.backend = check_choice("backend", owner, backend, ("auto", "reference", "triton"))
        self.fused_prologue = check_bool("fused_prologue", owner, fused_prologue)
        if self.fused_prologue:
            maps = feature_map_q if isinstance(feature_map_q, nn.ModuleList) else [feature_map_q]
            same = all(
                isinstance(f, HedgehogFeatureMap) and f.feature_dim == maps[0].feature_dim
                for f in maps
            )
            if not same or feature_map_k not in (None, feature_map_q):
                raise param_error(
                    "fused_prologue",
                    owner,
                    "False unless the maps are HedgehogFeatureMaps of one size shared by q and k",
                    fused_prologue,
                )

    def _hedgehog_weights(self, heads: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The hedgehog weights (H, m/2, d) and biases (H, m/2), one map or one per head."""
        fq = self.feature_map_q
        if isinstance(fq, nn.ModuleList):
            if len(fq) != heads:
                raise param_error(
                    "feature_map_q", "LinearAttention", f"one map per head ({heads})", len(fq)
                )
            return (
                torch.stack([f.linear.weight for f in fq]),
                torch.stack([f.linear.bias for f in fq]),
            )
        w, b = fq.linear.weight, fq.linear.bias
        return w.expand(heads, *w.shape), b.expand(heads, *b.shape)

    def features(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:math:`(\\phi_q(q), \\phi_k(k))`, each (B, H, N, m)."""
        fk = self.feature_map_q if self.feature_map_k is None else self.feature_map_k
        return apply_feature_map(self.feature_map_q, q), apply_feature_map(fk, k)

    def forward(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        owner = "LinearAttention"
        dims: dict = {}
        check_tensor("q", owner, q, shape=("B", "H", "N", "d"), dims=dims)
        check_tensor("k", owner, k, shape=("B", "H", "N", "d"), dims=dims, device=q.device)
        check_tensor("v", owner, v, shape=("B", "H", "N", None), dims=dims, device=q.device)
        for name, t in (("k", k), ("v", v)):
            if t.dtype != q.dtype:
                raise param_error(name, owner, f"of the dtype of q ({q.dtype})", t.dtype)
        if key_padding_mask is not None:
            check_tensor(
                "key_padding_mask",
                owner,
                key_padding_mask,
                shape=("B", "N"),
                dims=dims,
                dtype="bool",
                device=q.device,
            )
        triton_ok = self.causal and triton_supported(q.is_cuda)
        B, H, _, d = q.shape
        if self.fused_prologue:
            w, b = self._hedgehog_weights(H)
            if d != w.shape[-1]:
                raise param_error("q", owner, f"of head dimension {w.shape[-1]}", d)
            dtype = kernel_dtype(q.dtype, v.dtype)
            if triton_ok and hedgehog_plan(dtype, d, w.shape[1], v.shape[-1], B * H):
                backend = resolve_backend(
                    owner, self.backend, {"reference": True, "triton": True}, auto=_auto(q)
                )
                if backend == "triton":
                    keep = (
                        torch.ones(q.shape[0], q.shape[2], device=q.device)
                        if key_padding_mask is None
                        else (~key_padding_mask).float()
                    )
                    return causal_hedgehog_attention_triton(q, k, v, w, b, keep, self.eps)
        phi_q, phi_k = self.features(q, k)
        if phi_q.shape[:-1] != q.shape[:-1] or phi_k.shape != phi_q.shape:
            raise param_error(
                "feature_map_q",
                owner,
                "maps giving (B, H, N, m) features for q and k",
                f"{tuple(phi_q.shape)} and {tuple(phi_k.shape)}",
            )
        # the kernel takes this shape only if its launch configuration is one the gate compiles
        dtype = kernel_dtype(phi_q.dtype, phi_k.dtype, v.dtype)
        fits = feature_plan(dtype, phi_q.shape[-1], v.shape[-1], B * H) is not None
        backend = resolve_backend(
            owner, self.backend, {"reference": True, "triton": triton_ok and fits}, auto=_auto(q)
        )
        if key_padding_mask is not None:
            phi_k = phi_k.masked_fill(key_padding_mask[:, None, :, None], 0.0)
        if backend == "triton":
            return causal_linear_attention_triton(phi_q, phi_k, v, self.eps)
        return linear_attention_features(phi_q, phi_k, v, self.causal, self.eps)


def _auto(q: torch.Tensor) -> tuple[str, ...]:
    return ("triton",) if q.is_cuda else ()
