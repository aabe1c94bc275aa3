r"""The selective scan of Mamba-1 with mamba-ssm's argument convention, behind one dispatcher.

:func:`selective_scan` computes, per batch b, channel e and state n (Mamba, Alg. 2; the SSM
inside every Vim and AMVim path, AMVim abstract),

.. math::
    \Delta_t = \mathrm{softplus}(\Delta^{in}_t + b_\Delta),\quad
    h_t = e^{\Delta_t A} \odot h_{t-1} + \Delta_t B_t u_t,\quad
    \mathrm{out}_t = (C_t \cdot h_t + D\,u_t)\,\mathrm{SiLU}(z_t),\quad h_0 = 0,

on one of the backends ``"reference"`` (a sequential loop, :mod:`amvim.reference`),
``"chunked"`` (log-space prefix products within chunks, :mod:`amvim.chunked`, the CPU training
path), ``"triton"`` (the fused forward kernel, :mod:`amvim.kernels`; backward through
``chunked``) and ``"mamba_ssm"`` (mamba-ssm's CUDA ``selective_scan_fn``, when installed).
"""

from __future__ import annotations

import importlib.util
from typing import Literal

import torch

from paperkit import (
    check_bool,
    check_choice,
    check_memory,
    check_tensor,
    cuda_available,
    param_error,
    resolve_backend,
)

__all__ = ["BACKENDS", "mamba_ssm_available", "resolve", "scan", "selective_scan"]

BACKENDS = ("auto", "reference", "chunked", "recurrent", "triton", "mamba_ssm")
OWNER = "selective_scan"
CHUNK = 16


def mamba_ssm_available() -> bool:
    """Whether mamba-ssm is importable and a CUDA device is present."""
    return importlib.util.find_spec("mamba_ssm") is not None and cuda_available()


def resolve(backend: str, u: torch.Tensor, d_state: int = 1) -> str:
    """The backend to run for inputs like ``u`` with state size ``d_state``: ``backend`` itself
    (a ValueError when it cannot run here) or, for ``"auto"``, ``triton`` on CUDA (state sizes up
    to :data:`amvim.kernels.MAX_TRITON_STATE`) and ``recurrent`` otherwise."""
    from amvim.kernels import MAX_TRITON_STATE, TRITON_DTYPES, triton_supported

    check_choice("backend", OWNER, backend, BACKENDS)
    if backend == "mamba_ssm" and not mamba_ssm_available():
        raise param_error(
            "backend",
            OWNER,
            "a backend that can run here ('mamba_ssm' needs the mamba-ssm package, "
            "`pip install mamba-ssm causal-conv1d`, and a CUDA device; it is not installed "
            "here: use 'chunked', 'reference' or 'triton')",
            backend,
        )
    available = {
        "reference": True,
        "chunked": True,
        "recurrent": True,
        "triton": triton_supported(u.is_cuda) and d_state <= MAX_TRITON_STATE,
        "mamba_ssm": mamba_ssm_available() and u.is_cuda,
    }
    auto = ("triton", "recurrent") if u.is_cuda else ("recurrent",)
    name = resolve_backend(OWNER, backend, available, auto=auto)
    if name == "triton" and str(u.dtype).removeprefix("torch.") not in TRITON_DTYPES:
        raise param_error(
            "u", OWNER, "float16, bfloat16 or float32 for the triton backend", u.dtype
        )
    return name


def scan(
    u: torch.Tensor,
    delta: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    D: torch.Tensor | None,
    z: torch.Tensor | None,
    delta_bias: torch.Tensor | None,
    delta_softplus: bool,
    backend: str,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Output and last state on a resolved ``backend``, without argument checks (the layers'
    inner call; :func:`selective_scan` is the checked entry point)."""
    if backend == "reference":
        from amvim.reference import selective_scan_reference

        return selective_scan_reference(u, delta, A, B, C, D, z, delta_bias, delta_softplus)
    if backend == "chunked":
        from amvim.chunked import selective_scan_chunked

        return selective_scan_chunked(
            u, delta, A, B, C, D, z, delta_bias, delta_softplus, chunk=CHUNK
        )
    if backend == "recurrent":
        from amvim.recurrent import selective_scan_recurrent

        return selective_scan_recurrent(u, delta, A, B, C, D, z, delta_bias, delta_softplus)
    if backend == "triton":
        from amvim.kernels import selective_scan_triton

        return selective_scan_triton(u, delta, A, B, C, D, z, delta_bias, delta_softplus)
    from mamba_ssm.ops.selective_scan_interface import selective_scan_fn

    out, last = selective_scan_fn(
        u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state=True
    )
    return out, last


def selective_scan(
    u: torch.Tensor,
    delta: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    D: torch.Tensor | None = None,
    z: torch.Tensor | None = None,
    delta_bias: torch.Tensor | None = None,
    delta_softplus: bool = True,
    return_last_state: bool = False,
    backend: Literal["auto", "reference", "chunked", "recurrent", "triton", "mamba_ssm"] = "auto",
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    r"""The selective scan :math:`h_t = e^{\Delta_t A} h_{t-1} + \Delta_t B_t u_t`,
    :math:`\mathrm{out}_t = (C_t h_t + D u_t)\,\mathrm{SiLU}(z_t)` (Mamba, Alg. 2).

    Argument order and meaning follow mamba-ssm's ``selective_scan_fn`` (a drop-in oracle),
    except that ``delta_softplus`` defaults to True (as every Mamba layer calls it).

    Shapes:
        u, delta, z: (B, E, L) — batch, channels, sequence length.
        A: (E, N), the (negative) state matrix diagonal per channel.
        B, C: (B, N, L), input-dependent (no groups).
        D, delta_bias: (E,).
        returns: out (B, E, L) in u's dtype; with ``return_last_state`` also h_L (B, E, N).

    Args:
        backend: ``"auto"`` (``triton`` on CUDA, else ``recurrent``), ``"reference"``,
            ``"chunked"``, ``"recurrent"`` (a sequential loop with a hand-written backward,
            the CPU default), ``"triton"`` (CUDA, or the CPU under ``TRITON_INTERPRET=1``) or
            ``"mamba_ssm"`` (needs mamba-ssm and CUDA: refused with a ValueError naming the
            install otherwise). A backend that cannot run here is an error, never a fall-back.

    NaN policy: NaN or inf in any input is refused (ValueError); A, D and delta_bias are cast to
    u's dtype. The ``triton`` backend's last state carries no gradient.

    >>> import torch
    >>> u = torch.randn(1, 3, 5, dtype=torch.float64)
    >>> A = -torch.ones(3, 2, dtype=torch.float64)
    >>> Bm = torch.randn(1, 2, 5, dtype=torch.float64)
    >>> out = selective_scan(u, u, A, Bm, Bm, backend="chunked")
    >>> ref = selective_scan(u, u, A, Bm, Bm, backend="reference")
    >>> bool(torch.allclose(out, ref, atol=1e-12)), tuple(out.shape)
    (True, (1, 3, 5))
    """
    dims: dict = {}
    check_tensor("u", OWNER, u, shape=("B", "E", "L"), dims=dims)
    check_tensor("delta", OWNER, delta, shape=("B", "E", "L"), dims=dims, device=u.device)
    check_tensor("A", OWNER, A, shape=("E", "N"), dims=dims, device=u.device)
    check_tensor("B", OWNER, B, shape=("B", "N", "L"), dims=dims, device=u.device)
    check_tensor("C", OWNER, C, shape=("B", "N", "L"), dims=dims, device=u.device)
    for name, value, shape in (("D", D, ("E",)), ("delta_bias", delta_bias, ("E",))):
        if value is not None:
            check_tensor(name, OWNER, value, shape=shape, dims=dims, device=u.device)
    if z is not None:
        check_tensor("z", OWNER, z, shape=("B", "E", "L"), dims=dims, device=u.device)
    for name, value in (("delta", delta), ("B", B), ("C", C), ("z", z)):
        if value is not None and value.dtype != u.dtype:
            raise param_error(name, OWNER, f"of u's dtype {u.dtype}", value.dtype, cls=TypeError)
    check_bool("delta_softplus", OWNER, delta_softplus)
    check_bool("return_last_state", OWNER, return_last_state)
    batch, E, L = u.shape
    check_memory("u", OWNER, u, 6 * batch * E * A.shape[1] * L * CHUNK * u.element_size())
    name = resolve(backend, u, A.shape[1])
    A, D, delta_bias = (x.to(u.dtype) if x is not None else None for x in (A, D, delta_bias))
    out, last = scan(u, delta, A, B, C, D, z, delta_bias, delta_softplus, name)
    return (out, last) if return_last_state else out
