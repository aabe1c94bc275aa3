r"""The ZeroS attention operator: its checks, and the dispatch to one of four exact backends.

Per batch and head, with radial logits :math:`s_i`, prefix sums
:math:`E_t=\sum_{j\le t}e^{s_j}` and :math:`P_t=\sum_{j\le t}s_j`, the prefix softmax
:math:`p_{t,i}=e^{s_i}/E_t` splits exactly into

.. math::
    p_{t,i} = \tfrac1t + \delta^1_{t,i} + \delta^h_{t,i},\qquad
    \delta^1_{t,i} = \frac{s_i - P_t/t}{t},\qquad \delta^h = p - \tfrac1t - \delta^1,

where :math:`\delta^1` and :math:`\delta^h` each sum to 0 over :math:`i\le t`. ZeroS drops the
zero-order :math:`1/t` and gates the rest per token and head:

.. math::
    r_{t,i} = \sigma^1_t\delta^1_{t,i} + \sigma^h_t\delta^h_{t,i} \;(+\,\sigma^0_t/t),\qquad
    o_t = \sum_{i\le t} r_{t,i}\,(\hat q_t\cdot\hat k_i)\,v_i .

Since :math:`r_{t,i}=\alpha_t e^{s_i}+\beta_t s_i+\gamma_t` (:mod:`zeros.decomposition`), the
output needs only three :math:`d\times e` prefix states: linear in :math:`T`.

Backends (all exact, agreeing to rounding; tested against ``reference``):

- ``reference`` (:mod:`zeros.reference`): the explicit :math:`T\times T` weights, :math:`O(T^2d)`.
- ``scan`` (:mod:`zeros.scan`): cumulative sums of the states, :math:`O(Tde)` time and memory.
- ``chunk`` (:mod:`zeros.chunk`): blocks of ``chunk_size`` positions with carried states and a
  running maximum, :math:`O(TCd + Tde)` time, :math:`O(de)` state.
- ``triton`` (:mod:`zeros.kernels.chunk_triton`): ``chunk`` as one fused Triton kernel (causal;
  d of its launch table, 16, 32 or 64, every one compiled by the static gate; fp32 arithmetic
  whatever the input dtype; the backward recomputes with ``chunk`` in fp32).
- ``auto``: ``triton`` for causal attention on CUDA where the kernel runs, else ``chunk``
  (:func:`paperkit.resolve_backend`; a named backend that cannot run here is an error).

The torch backends compute in fp32 at least (bf16 cannot even count positions past 256) and
round the output to the inputs' dtype; the operator runs outside ``torch.autocast``.

Non-causal: every prefix sum becomes the sum over all :math:`T` positions and :math:`t` becomes
:math:`T`.
"""

from __future__ import annotations

import functools
from typing import Literal

import torch
import torch.nn.functional as F

from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_tensor,
    describe,
    param_error,
    resolve_backend,
)
from zeros import chunk, reference, scan
from zeros.kernels import chunk_triton

__all__ = ["BACKENDS", "attend", "zero_sum_weights", "zeros_attention"]

Backend = Literal["auto", "reference", "scan", "chunk", "triton"]
BACKENDS = ("auto", "reference", "scan", "chunk", "triton")


def _check_gates(
    owner: str,
    s: torch.Tensor,
    gate1: torch.Tensor,
    gateh: torch.Tensor,
    gate0: torch.Tensor | None,
    dims: dict,
    device: torch.device | None,
) -> None:
    """Logits and gates: floating, (B, T, H) agreeing with ``dims``, finite, on ``device``."""
    for name, x in (("s", s), ("gate1", gate1), ("gateh", gateh), ("gate0", gate0)):
        if x is not None or name != "gate0":
            check_tensor(name, owner, x, shape=("B", "T", "H"), dims=dims, device=device)


def _common_dtype(*xs: torch.Tensor | None) -> torch.dtype:
    return functools.reduce(torch.promote_types, (x.dtype for x in xs if x is not None))


def _cast(dtype: torch.dtype, *xs: torch.Tensor | None) -> list[torch.Tensor | None]:
    return [None if x is None else x.to(dtype) for x in xs]


def zero_sum_weights(
    s: torch.Tensor,
    gate1: torch.Tensor,
    gateh: torch.Tensor,
    gate0: torch.Tensor | None = None,
    causal: bool = True,
) -> torch.Tensor:
    r"""The explicit ZeroS weights :math:`r_{t,i}` (0 above the diagonal when causal).

    Each row sums to :math:`\sigma^0_t` (to 0 without it); with every gate 1, ``gate0`` too, the
    rows are the prefix softmax of ``s``.

    Args:
        s: radial logits, one scalar per key.
        gate1, gateh: the activated gates :math:`\sigma^1, \sigma^h` (in [0, 1] in the layer).
        gate0: the first-layer zero-order gate :math:`\sigma^0` (in [-1, 1]), or None.
        causal: prefix sums (True) or sums over the whole sequence.

    Shapes:
        s, gate1, gateh, gate0: (B, T, H). Returns (B, H, T, T), queries t along axis 2 and
        keys i along axis 3.

    Inputs of different floating dtypes are promoted to their common dtype (as torch's arithmetic
    does), which the output has. NaN or inf in any input is refused (ValueError).

    With :math:`\sigma^1=1, \sigma^h=0` the weights are :math:`(s_i-\bar s_t)/t`:

    >>> import torch
    >>> s = torch.tensor([[[0.0], [1.0]]])  # (B, T, H) = (1, 2, 1)
    >>> zero_sum_weights(s, torch.ones_like(s), torch.zeros_like(s))[0, 0]
    tensor([[ 0.0000,  0.0000],
            [-0.2500,  0.2500]])
    """
    owner = "zero_sum_weights"
    _check_gates(owner, s, gate1, gateh, gate0, {}, s.device if torch.is_tensor(s) else None)
    causal = check_bool("causal", owner, causal)
    B, T, H = s.shape
    dtype = _common_dtype(s, gate1, gateh, gate0)
    check_memory("s", owner, describe(s), 5 * B * H * T * T * dtype.itemsize)
    return reference.weights(*_cast(dtype, s, gate1, gateh, gate0), causal)


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    s: torch.Tensor,
    gate1: torch.Tensor,
    gateh: torch.Tensor,
    gate0: torch.Tensor | None,
    *,
    causal: bool,
    backend: str,
    chunk_size: int,
    owner: str,
    names: tuple[str, str] = ("q", "s"),
) -> torch.Tensor:
    """Normalise q and k, pick the backend and run it, for inputs already checked (shapes,
    one dtype and device), outside autocast: ``triton`` takes fp32, fp16 and bf16 and computes
    in fp32; the torch backends compute in fp32 (or float64 for float64 inputs). Either way the
    output has the inputs' dtype. :func:`zeros_attention` and the layer call it. The errors
    raised here name ``owner``, the function the user called, and the argument (of ``names``)
    that sized the work and that carried the logits."""
    # autocast would round the matmuls of the torch paths to its low dtype and mix dtypes: the
    # operator runs outside it, on the dtype of its inputs
    with torch.autocast(q.device.type, enabled=False):
        return _attend(q, k, v, s, gate1, gateh, gate0, causal, backend, chunk_size, owner, names)


def _attend(q, k, v, s, gate1, gateh, gate0, causal, backend, chunk_size, owner, names):
    name = resolve_backend(
        owner,
        backend,
        {
            "reference": True,
            "scan": True,
            "chunk": True,
            "triton": causal and chunk_triton.supported(q, v),
        },
        auto=("triton", "chunk") if q.is_cuda else ("chunk",),
    )
    if name == "triton":  # loads any of its dtypes, computes in fp32, rounds the output
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        return chunk_triton.attention(q, k, v, s, gate1, gateh, gate0, chunk_size)
    # the torch paths compute in fp32 at least (cumulative sums, exponentials and position
    # counters are not exact in 16 bits) and round the output to the inputs' dtype
    dtype = q.dtype
    work = torch.promote_types(dtype, torch.float32)
    q, k, v, s, gate1, gateh, gate0 = _cast(work, q, k, v, s, gate1, gateh, gate0)
    if name == "chunk":  # normalises q and k itself, folded into per-position scalars
        return chunk.attention(q, k, v, s, gate1, gateh, gate0, causal, chunk_size).to(dtype)
    q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
    B, T, H, d = q.shape
    e, size = v.shape[-1], work.itemsize
    length = Described(f"a sequence of length T = {T}")
    if name == "reference":
        check_memory(names[0], owner, length, 6 * B * H * T * T * size)
        out = reference.attention(q, k, v, s, gate1, gateh, gate0, causal)
    elif name == "scan":
        check_memory(names[0], owner, length, B * T * H * d * e * (32 + 4 * size))
        spread = scan.logit_spread(s, causal)
        if spread > scan.SCAN_RANGE_LIMIT:
            raise param_error(
                names[1],
                owner,
                f"such that every prefix's maximum is within {scan.SCAN_RANGE_LIMIT:g} of the "
                "overall maximum for backend='scan' (use backend='chunk')",
                Described(f"logits with a prefix maximum {spread:.0f} below the overall one"),
            )
        out = scan.attention(q, k, v, s, gate1, gateh, gate0, causal)
    return out.to(dtype)


def zeros_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    s: torch.Tensor,
    gate1: torch.Tensor,
    gateh: torch.Tensor,
    gate0: torch.Tensor | None = None,
    *,
    causal: bool = True,
    backend: Backend = "auto",
    chunk_size: int = 64,
) -> torch.Tensor:
    r"""ZeroS attention :math:`o_t=\sum_i r_{t,i}(\hat q_t\cdot\hat k_i)v_i`, before the LayerNorm.

    Args:
        q, k: queries and keys, RoPE already applied; normalised to unit length here.
        v: values.
        s: radial logits, one scalar per key.
        gate1, gateh: activated gates :math:`\sigma^1,\sigma^h` (in [0, 1] in the layer).
        gate0: zero-order gate :math:`\sigma^0` (in [-1, 1], first layer), or None.
        causal: attend to the prefix (True) or the whole sequence.
        backend: ``"reference"``, ``"scan"``, ``"chunk"``, ``"triton"`` or ``"auto"`` (see the
            module docstring). ``triton`` needs causal attention, Triton with a CUDA device (or
            its interpreter), e = d, d in {16, 32, 64} and fp32, fp16 or bf16. ``scan``
            refuses logits whose prefix maxima lie more than
            :data:`zeros.scan.SCAN_RANGE_LIMIT` (700) below their overall maximum.
        chunk_size: block length C of ``chunk`` (and of the ``triton`` backward's recompute;
            the kernel's own tiles come from its launch table).

    Shapes:
        q, k: (B, T, H, d). v: (B, T, H, e). s, gate1, gateh, gate0: (B, T, H).
        Returns (B, T, H, e).

    Every input is on one device. Inputs of different floating dtypes are promoted to their
    common dtype (as torch's arithmetic does), which the output has. NaN or inf in any input is
    refused (ValueError), on every backend. ``reference`` and ``scan`` refuse sizes whose
    T x T weights or (T, d, e) states would not fit in memory (:func:`paperkit.check_memory`).

    >>> import torch
    >>> q, k, v = torch.randn(3, 1, 5, 2, 16).unbind(0)
    >>> s, g1, gh = torch.rand(3, 1, 5, 2).unbind(0)
    >>> zeros_attention(q, k, v, s, g1, gh, backend="chunk", chunk_size=2).shape
    torch.Size([1, 5, 2, 16])
    """
    owner = "zeros_attention"
    dims: dict = {}
    check_tensor("q", owner, q, shape=("B", "T", "H", "d"), dims=dims)
    check_tensor("k", owner, k, shape=("B", "T", "H", "d"), dims=dims, device=q.device)
    check_tensor("v", owner, v, shape=("B", "T", "H", "e"), dims=dims, device=q.device)
    _check_gates(owner, s, gate1, gateh, gate0, dims, q.device)
    causal = check_bool("causal", owner, causal)
    check_choice("backend", owner, backend, BACKENDS)
    chunk_size = check_int("chunk_size", owner, chunk_size, low=1)
    dtype = _common_dtype(q, k, v, s, gate1, gateh, gate0)
    return attend(
        *_cast(dtype, q, k, v, s, gate1, gateh, gate0),
        causal=causal,
        backend=backend,
        chunk_size=chunk_size,
        owner=owner,
    )
