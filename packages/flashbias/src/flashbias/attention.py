r"""Attention with a bias given as low-rank factors, and the dense-bias reference.

For q (B,N,H,d), k, v (B,M,H,d) and bias factors :math:`\phi_q` (B|1,N,H,R), :math:`\phi_k`
(B|1,M,H,R), FlashBias computes

.. math::
    O = \mathrm{softmax}\big(s\,QK^\top + \phi_q\phi_k^\top + A\big)\,V
      = \mathrm{softmax}\big([sQ,\ \phi_q]\,[K,\ \phi_k]^\top + A\big)\,V,

with ``s`` the softmax scale (the bias factors are *not* scaled), ``A`` an optional additive
mask and the causal :math:`-\infty` above the diagonal (:math:`j > i`). The second form is one
unmodified fused attention over :math:`d + R` head dimensions, so no :math:`N\times M` bias is ever
materialised.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F

from paperkit import Described, check_choice, param_error

__all__ = ["BACKENDS", "dense_bias_attention", "flash_bias_attention"]

BACKENDS = ("auto", "reference", "sdpa", "triton")
MAX_TRITON_WIDTH = 256


def _describe(x: torch.Tensor) -> Described:
    return Described(f"a {x.dtype} tensor of shape {tuple(x.shape)}")


def _check_qkv(owner: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor):
            raise param_error(name, owner, "a torch.Tensor", type(x).__name__, cls=TypeError)
        if not x.is_floating_point():
            raise param_error(name, owner, "a floating-point tensor", _describe(x), cls=TypeError)
        if x.dim() != 4:
            raise param_error(name, owner, "a 4-D tensor (B, N, H, d)", _describe(x))
    if k.shape != v.shape:
        raise param_error("v", owner, f"of the shape of k {tuple(k.shape)}", _describe(v))
    B, _, H, d = q.shape
    if k.shape[0] != B or k.shape[2] != H or k.shape[3] != d:
        raise param_error("k", owner, f"of shape ({B}, M, {H}, {d}) to match q", _describe(k))


def _check_factors(
    q: torch.Tensor, k: torch.Tensor, q_bias: torch.Tensor | None, k_bias: torch.Tensor | None
) -> None:
    owner = "flash_bias_attention"
    if (q_bias is None) != (k_bias is None):
        missing = "k_bias" if k_bias is None else "q_bias"
        raise param_error(missing, owner, "given together with the other bias factor", None)
    if q_bias is None:
        return
    B, N, H, _ = q.shape
    M = k.shape[1]
    for name, x, L in (("q_bias", q_bias, N), ("k_bias", k_bias, M)):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            got = _describe(x) if isinstance(x, torch.Tensor) else type(x).__name__
            raise param_error(name, owner, "a floating-point tensor", got, cls=TypeError)
        if x.dim() != 4 or x.shape[0] not in (1, B) or x.shape[1] != L or x.shape[2] != H:
            raise param_error(name, owner, f"of shape ({B} or 1, {L}, {H}, R)", _describe(x))
        if not bool(torch.isfinite(x).all()):
            raise param_error(name, owner, "finite", Described("a tensor with inf or nan"))
    if q_bias.shape[3] != k_bias.shape[3]:
        raise param_error(
            "k_bias", owner, f"of the rank of q_bias ({q_bias.shape[3]})", _describe(k_bias)
        )


def _check_mask(owner: str, mask: torch.Tensor | None, B: int, H: int, N: int, M: int) -> None:
    if mask is None:
        return
    if not isinstance(mask, torch.Tensor) or not mask.is_floating_point():
        got = _describe(mask) if isinstance(mask, torch.Tensor) else type(mask).__name__
        raise param_error("attn_mask", owner, "a floating-point additive mask", got, cls=TypeError)
    try:
        torch.broadcast_shapes(mask.shape, (B, H, N, M))
    except RuntimeError:
        raise param_error(
            "attn_mask", owner, f"broadcastable to ({B}, {H}, {N}, {M})", _describe(mask)
        ) from None
    if mask.dim() > 4:
        raise param_error("attn_mask", owner, "at most 4-D", _describe(mask))


def _causal_mask(N: int, M: int, like: torch.Tensor) -> torch.Tensor:
    """Additive (N, M) mask: 0 where j <= i, -inf above the diagonal."""
    keep = torch.ones(N, M, dtype=torch.bool, device=like.device).tril()
    zero = torch.zeros((), dtype=like.dtype, device=like.device)
    return torch.where(keep, zero, torch.tensor(-math.inf, dtype=like.dtype, device=like.device))


def _softmax_attention(scores: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """softmax over the last axis of scores (B,H,N,M), then times v (B,M,H,d) -> (B,N,H,d)."""
    if causal:
        scores = scores + _causal_mask(scores.shape[-2], scores.shape[-1], scores)
    return torch.einsum("bhnm,bmhd->bnhd", scores.softmax(dim=-1), v)


def dense_bias_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    bias: torch.Tensor,
    *,
    causal: bool = False,
    softmax_scale: float | None = None,
) -> torch.Tensor:
    r"""The naive reference: :math:`O = \mathrm{softmax}(s\,QK^\top + B)V` with the dense bias
    ``bias`` (B|1, H, N, M) materialised; q (B,N,H,d), k, v (B,M,H,d); returns (B,N,H,d)."""
    owner = "dense_bias_attention"
    _check_qkv(owner, q, k, v)
    B, N, H, d = q.shape
    M = k.shape[1]
    if not isinstance(bias, torch.Tensor) or not bias.is_floating_point():
        got = _describe(bias) if isinstance(bias, torch.Tensor) else type(bias).__name__
        raise param_error("bias", owner, "a floating-point tensor", got, cls=TypeError)
    if bias.dim() != 4 or bias.shape[0] not in (1, B) or bias.shape[1:] != (H, N, M):
        raise param_error("bias", owner, f"of shape ({B} or 1, {H}, {N}, {M})", _describe(bias))
    scale = 1.0 / math.sqrt(d) if softmax_scale is None else softmax_scale
    scores = scale * torch.einsum("bnhd,bmhd->bhnm", q, k) + bias
    return _softmax_attention(scores, v, causal)


def _reference(q, k, v, q_bias, k_bias, mask, causal, scale):
    scores = scale * torch.einsum("bnhd,bmhd->bhnm", q, k)
    if q_bias is not None:
        scores = scores + torch.einsum("bnhr,bmhr->bhnm", q_bias, k_bias)
    if mask is not None:
        scores = scores + mask
    return _softmax_attention(scores, v, causal)


def _sdpa(q, k, v, q_bias, k_bias, mask, causal, scale):
    """One SDPA call on [s q, q_b] and [k, k_b] with scale 1 (the FlashBias concat).

    v is zero-padded to the same d + R columns: torch's fused (flash) SDPA kernels need equal
    head sizes and otherwise fall back to the math path, which materialises the N x M scores.
    """
    B, N, H, d = q.shape
    M = k.shape[1]
    qq, kk, vv = scale * q, k, v
    if q_bias is not None:
        qq = torch.cat([qq, q_bias.expand(B, N, H, -1).to(q.dtype)], dim=-1)
        kk = torch.cat([kk, k_bias.expand(B, M, H, -1).to(k.dtype)], dim=-1)
        vv = F.pad(v, (0, q_bias.shape[3]))
    if causal and mask is not None:
        mask = mask + _causal_mask(N, M, mask)
        causal = False
    out = F.scaled_dot_product_attention(
        qq.transpose(1, 2),
        kk.transpose(1, 2),
        vv.transpose(1, 2),
        attn_mask=mask,
        is_causal=causal,
        scale=1.0,
    )
    return out.transpose(1, 2)[..., :d]


def flash_bias_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_bias: torch.Tensor | None = None,
    k_bias: torch.Tensor | None = None,
    *,
    attn_mask: torch.Tensor | None = None,
    causal: bool = False,
    softmax_scale: float | None = None,
    backend: Literal["auto", "reference", "sdpa", "triton"] = "auto",
) -> torch.Tensor:
    r"""Attention with a low-rank bias :math:`\phi_q\phi_k^\top` folded into the fused matmul.

    Args:
        q: (B, N, H, d) queries. k, v: (B, M, H, d) keys and values.
        q_bias, k_bias: (B|1, N, H, R) and (B|1, M, H, R) bias factors (both or neither).
        attn_mask: optional additive float mask broadcastable to (B, H, N, M).
        causal: mask keys j > i.
        softmax_scale: ``s``, default :math:`1/\sqrt d`; it does not scale the bias.
        backend: ``"reference"`` (explicit scores), ``"sdpa"`` (torch SDPA on the concatenated
            operands, CPU and GPU), ``"triton"`` (the fused kernel), ``"auto"`` (Triton on a CUDA
            tensor when available and d + R <= 256, else SDPA).

    Returns:
        (B, N, H, d) output :math:`\mathrm{softmax}(s\,QK^\top+\phi_q\phi_k^\top+A)V`.
    """
    owner = "flash_bias_attention"
    check_choice("backend", owner, backend, BACKENDS)
    _check_qkv(owner, q, k, v)
    _check_factors(q, k, q_bias, k_bias)
    B, N, H, d = q.shape
    _check_mask(owner, attn_mask, B, H, N, k.shape[1])
    scale = 1.0 / math.sqrt(d) if softmax_scale is None else float(softmax_scale)
    R = 0 if q_bias is None else q_bias.shape[3]
    if backend == "auto":
        from flashbias.kernels import triton_supported

        fits = d + R <= MAX_TRITON_WIDTH
        backend = "triton" if q.is_cuda and fits and triton_supported() else "sdpa"
    if backend == "triton":
        if d + R > MAX_TRITON_WIDTH:
            raise param_error(
                "q_bias",
                owner,
                f"of rank R with d + R <= {MAX_TRITON_WIDTH} for the triton backend",
                Described(f"d + R = {d} + {R}"),
            )
        from flashbias.kernels import flash_bias_triton

        return flash_bias_triton(q, k, v, q_bias, k_bias, attn_mask, causal, scale)
    run = _reference if backend == "reference" else _sdpa
    return run(q, k, v, q_bias, k_bias, attn_mask, causal, scale)
