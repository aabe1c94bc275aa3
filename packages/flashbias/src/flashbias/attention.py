r"""The public ops: attention with a bias given as low-rank factors, and with a dense bias.

For q (B,N,H,d), k, v (B,M,H,d) and bias factors :math:`\phi_q` (B|1,N,H,R),
:math:`\phi_k` (B|1,M,H,R), FlashBias computes

.. math::
    O = \mathrm{softmax}\big(s\,QK^\top + \phi_q\phi_k^\top + A\big)\,V
      = \mathrm{softmax}\big([sQ,\ \phi_q]\,[K,\ \phi_k]^\top + A\big)\,V,

with ``s`` the softmax scale (the bias factors are *not* scaled), ``A`` an optional additive
mask and the causal :math:`-\infty` above the diagonal (:math:`j > i`). The second form is one
unmodified fused attention over :math:`d + R` head dimensions, so no :math:`N\times M` bias is ever
materialised.

This module checks the arguments and dispatches to a backend: ``reference``
(:mod:`flashbias.reference`), ``sdpa`` (:mod:`flashbias.sdpa`) or ``triton``
(:mod:`flashbias.kernels`). NaN policy, the same on every backend: non-finite q, k, v, factors,
bias and scale are refused; the mask may hold :math:`-\infty` (that is what masks a key) but not
NaN or :math:`+\infty`; a query row whose every key is masked gets output 0 and gradient 0.
"""

from __future__ import annotations

import math
from collections.abc import MutableMapping
from typing import Literal

import torch

from flashbias.kernels.launch import MAX_RANK
from flashbias.reference import dense_reference, flash_bias_reference
from flashbias.sdpa import flash_bias_sdpa
from paperkit import (
    Described,
    check_bool,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
    resolve_backend,
)

__all__ = ["BACKENDS", "dense_bias_attention", "flash_bias_attention"]

#: The backends of :func:`flash_bias_attention`.
BACKENDS = ("auto", "reference", "sdpa", "triton")
_Dims = MutableMapping[str, tuple[int, str]]


def _check_qkv(owner: str, q, k, v) -> _Dims:
    """q (B, N, H, d), k and v (B, M, H, d): floating, finite, one dtype and device."""
    dims: _Dims = {}
    check_tensor("q", owner, q, shape=("B", "N", "H", "d"), dims=dims)
    for name, x in (("k", k), ("v", v)):
        check_tensor(name, owner, x, shape=("B", "M", "H", "d"), dims=dims, device=q.device)
        if x.dtype != q.dtype:
            raise param_error(
                name, owner, f"of the dtype of 'q' ({q.dtype})", describe(x), cls=TypeError
            )
    return dims


def _check_factors(owner: str, q, q_bias, k_bias, dims: _Dims):
    """Both factors or neither; (B|1, N, H, R) and (B|1, M, H, R), finite; cast to q's dtype."""
    if (q_bias is None) != (k_bias is None):
        missing = "k_bias" if k_bias is None else "q_bias"
        raise param_error(missing, owner, "given together with the other bias factor", None)
    if q_bias is None:
        return None, None
    B = dims["B"][0]
    for name, x, length in (("q_bias", q_bias, "N"), ("k_bias", k_bias, "M")):
        check_tensor(name, owner, x, shape=(None, length, "H", "R"), dims=dims, device=q.device)
        if x.shape[0] not in (1, B):
            raise param_error(name, owner, f"of batch size 1 or B={B}", describe(x))
    return q_bias.to(q.dtype), k_bias.to(q.dtype)


def _check_mask(owner: str, q, attn_mask, dims: _Dims):
    """An additive float mask broadcastable to (B, H, N, M), entries finite or -inf; cast to q's
    dtype."""
    if attn_mask is None:
        return None
    check_tensor("attn_mask", owner, attn_mask, ndim=(1, 2, 3, 4), device=q.device, finite=False)
    B, H, N, M = (dims[a][0] for a in ("B", "H", "N", "M"))
    try:
        torch.broadcast_shapes(attn_mask.shape, (B, H, N, M))
    except RuntimeError:
        expected = f"broadcastable to (B, H, N, M) = ({B}, {H}, {N}, {M})"
        raise param_error("attn_mask", owner, expected, describe(attn_mask)) from None
    if not bool((attn_mask < math.inf).all()):  # NaN compares False too
        raise param_error(
            "attn_mask", owner, "finite or -inf (no NaN or +inf)", describe(attn_mask)
        )
    return attn_mask.to(q.dtype)


def _check_scale(owner: str, softmax_scale, d: int) -> float:
    if softmax_scale is None:
        return 1.0 / math.sqrt(d)
    return check_real("softmax_scale", owner, softmax_scale, low=0, low_open=True)


def _backend(owner: str, backend: str, q: torch.Tensor, k: torch.Tensor, R: int) -> str:
    """The backend to run; ``auto``: the Triton kernels for a CUDA tensor whose shape has a
    gated launch configuration (:func:`flashbias.kernels.triton_shape_error`), else SDPA."""
    from flashbias.kernels import triton_shape_error, triton_supported

    B, N, H, d = q.shape
    dtype = str(q.dtype).removeprefix("torch.")
    refused = triton_shape_error(dtype, d, R, B, N, k.shape[1], H)
    available = {"reference": True, "sdpa": True, "triton": triton_supported(q.is_cuda)}
    auto = ("triton", "sdpa") if q.is_cuda and refused is None else ("sdpa",)
    name = resolve_backend(owner, backend, available, auto=auto)
    if name == "triton" and dtype not in ("float16", "bfloat16", "float32"):
        raise param_error(
            "q",
            owner,
            "float16, bfloat16 or float32 for the triton backend",
            describe(q),
            cls=TypeError,
        )
    if name == "triton" and refused is not None:
        raise param_error(
            "q_bias" if R > MAX_RANK else "q",
            owner,
            f"of a shape the triton backend takes ({refused})",
            Described(f"d = {d}, R = {R}, B = {B}, H = {H}, N = {N}, M = {k.shape[1]}"),
        )
    return name


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
    r"""Attention with a low-rank bias :math:`\phi_q\phi_k^\top` folded into the fused matmul,
    :math:`O = \mathrm{softmax}(s\,QK^\top+\phi_q\phi_k^\top+A)V`.

    Shapes:
        q: (B, N, H, d) queries; k, v: (B, M, H, d) keys and values (q's dtype and device).
        q_bias, k_bias: (B or 1, N, H, R) and (B or 1, M, H, R) bias factors, both or neither;
            cast to q's dtype.
        attn_mask: broadcastable to (B, H, N, M), floating; cast to q's dtype.
        returns: (B, N, H, d).

    Args:
        attn_mask: optional additive mask; :math:`-\infty` masks a key.
        causal: mask the keys j > i (aligned at the top left when N != M).
        softmax_scale: ``s`` > 0, default :math:`1/\sqrt d`; it does not scale the bias.
        backend: ``"reference"`` (:mod:`flashbias.reference`, the scores built in full),
            ``"sdpa"`` (torch SDPA on the concatenated operands, CPU and GPU), ``"triton"`` (the
            fused kernels: fp16, bf16 or fp32, d <= 128, R <= 32, a GPU or
            ``TRITON_INTERPRET=1``), ``"auto"`` (Triton for a CUDA tensor the kernels take, else
            SDPA). A backend that cannot run here is an error, and so is a shape the ``triton``
            backend has no gated launch configuration for.

    NaN policy (every backend): NaN or inf in q, k, v or the factors, and a non-finite or
    non-positive ``softmax_scale``, are refused; the mask may hold :math:`-\infty` but not NaN or
    :math:`+\infty`. A query row whose every key is masked gets output 0 and gradient 0.

    >>> q = k = v = torch.randn(1, 6, 2, 8)
    >>> q_b, k_b = torch.randn(1, 6, 2, 3), torch.randn(1, 6, 2, 3)
    >>> out = flash_bias_attention(q, k, v, q_b, k_b, causal=True, backend="sdpa")
    >>> ref = flash_bias_attention(q, k, v, q_b, k_b, causal=True, backend="reference")
    >>> out.shape, bool((out - ref).abs().max() < 1e-5)
    (torch.Size([1, 6, 2, 8]), True)
    """
    owner = "flash_bias_attention"
    dims = _check_qkv(owner, q, k, v)
    q_bias, k_bias = _check_factors(owner, q, q_bias, k_bias, dims)
    attn_mask = _check_mask(owner, q, attn_mask, dims)
    causal = check_bool("causal", owner, causal)
    scale = _check_scale(owner, softmax_scale, q.shape[3])
    R = 0 if q_bias is None else q_bias.shape[3]
    name = _backend(owner, backend, q, k, R)
    if name == "reference":
        B, N, H, _ = q.shape
        scores = B * H * N * k.shape[1] * q.element_size()
        check_memory("backend", owner, backend, 3 * scores)  # scores, weights, their gradient
        run = flash_bias_reference
    elif name == "sdpa":
        run = flash_bias_sdpa
    else:
        from flashbias.kernels import flash_bias_triton as run
    return run(q, k, v, q_bias, k_bias, attn_mask, causal, scale)


def dense_bias_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    bias: torch.Tensor,
    *,
    causal: bool = False,
    softmax_scale: float | None = None,
) -> torch.Tensor:
    r"""The naive reference with the dense bias materialised:
    :math:`O = \mathrm{softmax}(s\,QK^\top + B)V`.

    Shapes:
        q: (B, N, H, d); k, v: (B, M, H, d) (q's dtype and device).
        bias: (B or 1, H, N, M), floating; cast to q's dtype.
        returns: (B, N, H, d).

    NaN policy: NaN or inf in q, k, v or the bias, and a non-finite or non-positive
    ``softmax_scale``, are refused (mask keys with ``causal`` or with
    :func:`flash_bias_attention`'s ``attn_mask``).

    >>> q = k = v = torch.randn(1, 4, 2, 8)
    >>> dense_bias_attention(q, k, v, torch.zeros(1, 2, 4, 4), causal=True).shape
    torch.Size([1, 4, 2, 8])
    """
    owner = "dense_bias_attention"
    dims = _check_qkv(owner, q, k, v)
    check_tensor("bias", owner, bias, shape=(None, "H", "N", "M"), dims=dims, device=q.device)
    B = dims["B"][0]
    if bias.shape[0] not in (1, B):
        raise param_error("bias", owner, f"of batch size 1 or B={B}", describe(bias))
    causal = check_bool("causal", owner, causal)
    scale = _check_scale(owner, softmax_scale, q.shape[3])
    return dense_reference(q, k, v, bias.to(q.dtype), causal, scale)
