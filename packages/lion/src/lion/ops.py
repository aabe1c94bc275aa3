r"""LION attention as one op with one ``backend`` argument: the paper's three equivalent forms.

``lion_attention(q, k, v, log_lambda, backend=...)`` computes
:math:`Y=(A/(A\mathbf 1+\epsilon))V`, :math:`A=(qk^\top)\odot M`, with the bidirectional decay
mask :math:`M=M^F+M^B-I` of :mod:`lion.reference`, by one of:

- ``"reference"``: the full (attention) form, :math:`O(N^2d)` time, :math:`O(N^2)` memory
  (:mod:`lion.reference`);
- ``"chunk"``: the chunkwise form in torch, :math:`O(NCd+Nd^2)` (:mod:`lion.chunk`);
- ``"rnn"``: the forward + backward recurrence, an :math:`O(d^2)` state (:mod:`lion.rnn`);
- ``"triton"``: the chunkwise form as one Triton kernel (:mod:`lion.kernels.chunk_triton`;
  a CUDA device or ``TRITON_INTERPRET=1``, d a power of two in [16, 128] and ``chunk_size`` a
  power of two >= 16);
- ``"auto"``: ``"triton"`` where it runs on the inputs, else ``"chunk"``
  (:func:`paperkit.resolve_backend`); a named backend that cannot run here is an error.

Precision: float16 and bfloat16 inputs are computed in float32 by every backend (decays, cumulative
sums, states and products), with autocast off inside, and the result is cast back once at the end;
so the op runs under ``torch.autocast`` and its backward differentiates the float32 computation.
"""

from __future__ import annotations

import functools

import torch

from lion.chunk import chunk_parts
from lion.kernels.chunk_triton import (
    MAX_TRITON_HEAD_DIM,
    lion_chunk_triton_parts,
    triton_fits,
    triton_runs,
)
from lion.reference import LOG_LAMBDA_MIN, check_decays, normalize, reference_parts
from lion.rnn import rnn_parts
from paperkit import (
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    param_error,
    resolve_backend,
)

__all__ = [
    "AUTO",
    "BACKENDS",
    "lion_attention",
    "lion_parts",
    "pick_backend",
    "reference_bytes",
    "work_dtype",
]

#: The backends of :func:`lion_attention` and :class:`lion.LionAttention`, ``"auto"`` aside.
BACKENDS = ("reference", "chunk", "rnn", "triton")
#: What ``"auto"`` prefers, first that can run.
AUTO = ("triton", "chunk")


def reference_bytes(batch: int, heads: int, n: int, element_size: int) -> int:
    """Bytes the reference (full) form holds at once: about four ``(B, H, N, N)`` tensors (the
    two mask halves, their sum and :math:`A`)."""
    return 4 * batch * heads * n * n * element_size


def pick_backend(
    owner: str,
    backend: str,
    head_dim: int,
    device: torch.device,
    chunk_size: int,
) -> str:
    """The backend that runs: ``backend`` itself, or for ``"auto"`` the first of :data:`AUTO`
    that can run on ``device`` (:func:`paperkit.resolve_backend`). ``"triton"`` named with a head
    size that is not a power of two in [16, 128] or a chunk size that is not a power of two
    >= 16 is refused; ``"auto"`` sends those shapes to ``"chunk"``. Every shape ``"triton"``
    accepts has a launch configuration of the static kernel gate
    (:func:`lion.kernels.chunk_triton.launch_config`)."""
    check_choice("backend", owner, backend, ("auto", *BACKENDS))
    fits = triton_fits(head_dim, chunk_size)
    if backend == "triton" and not fits:
        expected = (
            "a backend that fits the inputs ('triton' needs a head size d that is a power of two "
            f"in [16, {MAX_TRITON_HEAD_DIM}] and a chunk_size that is a power of two >= 16; here "
            f"{head_dim} and {chunk_size})"
        )
        raise param_error("backend", owner, expected, backend)
    available = {
        "reference": True,
        "chunk": True,
        "rnn": True,
        "triton": fits and triton_runs(device),
    }
    return resolve_backend(owner, backend, available, auto=AUTO)


def work_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype the backends compute in for inputs of ``dtype``: float32 for float16, bfloat16
    and float32, float64 for float64."""
    return torch.promote_types(dtype, torch.float32)


def lion_parts(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_lambda: torch.Tensor | None,
    backend: str,
    chunk_size: int,
) -> torch.Tensor:
    """Unnormalised ``[num, den]`` ``(B, H, N, d + 1)`` by a resolved ``backend``, on checked
    inputs with decays clamped at :data:`lion.reference.LOG_LAMBDA_MIN`; computed, and returned,
    in :func:`work_dtype` of ``q`` (float32 for float16/bfloat16), with autocast off."""
    work = work_dtype(q.dtype)
    with torch.autocast(q.device.type, enabled=False):
        if backend == "triton":  # loads the inputs as they are, computes in float32
            return lion_chunk_triton_parts(q, k, v, log_lambda, chunk_size)
        q, k, v = (x.to(work) for x in (q, k, v))
        if log_lambda is not None:
            log_lambda = log_lambda.to(work)
        if backend == "reference":
            return reference_parts(q, k, v, log_lambda)
        if backend == "rnn":
            return rnn_parts(q, k, v, log_lambda)
        return chunk_parts(q, k, v, log_lambda, chunk_size)


def lion_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_lambda: torch.Tensor | None = None,
    *,
    backend: str = "auto",
    chunk_size: int = 64,
    eps: float = 1e-6,
) -> torch.Tensor:
    r"""Bidirectional LION attention :math:`Y=(A/(A\mathbf 1+\epsilon))V`,
    :math:`A=(qk^\top)\odot M`, by the form ``backend`` names (see the module docstring); every
    backend gives the same result up to rounding.

    Shapes:
        q, k: ``(B, H, N, d)``, after the (positive) feature map.
        v: ``(B, H, N, d)``.
        log_lambda: ``(B, H, N)``, :math:`\log\lambda_t \le 0`; None for LION-LIT
        (:math:`\lambda=1`).
        returns: ``(B, H, N, d)``.

    The output has the inputs' common floating dtype (``torch.promote_types``: float32 with
    float64 gives float64; under ``torch.autocast`` the autocast dtype when any input has it);
    float16 and bfloat16 are computed in float32. The inputs must share a device. NaN or inf in any
    input is refused (``ValueError``), the same on every backend. ``chunk_size`` (>= 1) is the
    chunk of ``"chunk"`` and ``"triton"``; ``eps`` (>= 0) is added to the denominator.

    >>> import torch
    >>> q, k = torch.rand(2, 1, 2, 5, 4, dtype=torch.float64)
    >>> v = torch.randn(1, 2, 5, 4, dtype=torch.float64)
    >>> ll = torch.full((1, 2, 5), -0.5, dtype=torch.float64)
    >>> full = lion_attention(q, k, v, ll, backend="reference")
    >>> torch.allclose(lion_attention(q, k, v, ll, backend="rnn"), full)
    True
    """
    owner = "lion_attention"
    dims: dict = {}
    check_tensor("q", owner, q, shape=("B", "H", "N", "d"), dims=dims)
    for name, x in (("k", k), ("v", v)):
        check_tensor(name, owner, x, shape=("B", "H", "N", "d"), dims=dims, device=q.device)
    tensors = [q, k, v]
    if log_lambda is not None:
        shape = ("B", "H", "N")
        check_decays("log_lambda", owner, log_lambda, shape=shape, dims=dims, device=q.device)
        tensors.append(log_lambda)
    chunk_size = check_int("chunk_size", owner, chunk_size, low=1)
    eps = check_real("eps", owner, eps, low=0)
    name = pick_backend(owner, backend, q.shape[-1], q.device, chunk_size)
    if name == "reference":
        B, H, N, _ = q.shape
        check_memory("q", owner, q, reference_bytes(B, H, N, q.element_size()))
    dtype = functools.reduce(torch.promote_types, (t.dtype for t in tensors))
    q, k, v = (t.to(dtype) for t in (q, k, v))
    if log_lambda is not None:
        log_lambda = log_lambda.to(work_dtype(dtype)).clamp(min=LOG_LAMBDA_MIN)
    return normalize(lion_parts(q, k, v, log_lambda, name, chunk_size), eps).to(dtype)
