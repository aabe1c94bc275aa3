r"""The ``reference`` backend: the selective scan of Mamba-1 as a sequential loop over time.

With the inputs of :func:`amvim.ops.selective_scan` (u, Δ of shape (B, E, L), A (E, N),
B, C (B, N, L)), per batch b, channel e and state n (Gu & Dao's Mamba, Alg. 2, zero-order hold
for A and Euler for B, as the Vim and AMVim blocks use it, AMVim abstract):

.. math::
    \Delta_t = \mathrm{softplus}(\Delta^{in}_t + b_\Delta), \quad
    h_t = e^{\Delta_t A} \odot h_{t-1} + \Delta_t B_t u_t, \quad
    y_t = C_t \cdot h_t + D\,u_t, \quad
    \mathrm{out}_t = y_t \cdot \mathrm{SiLU}(z_t),

with :math:`h_0 = 0`. Every fast path is tested against this module. Inputs are validated by
:mod:`amvim.ops`; nothing here checks them again.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["discretize", "finish", "selective_scan_reference"]


def discretize(
    delta: torch.Tensor, delta_bias: torch.Tensor | None, delta_softplus: bool
) -> torch.Tensor:
    r""":math:`\Delta = \mathrm{softplus}(\Delta^{in} + b_\Delta)` (the bias and the softplus
    optional), shape (B, E, L)."""
    if delta_bias is not None:
        delta = delta + delta_bias[None, :, None]
    return F.softplus(delta) if delta_softplus else delta


def finish(
    y: torch.Tensor, u: torch.Tensor, D: torch.Tensor | None, z: torch.Tensor | None
) -> torch.Tensor:
    r"""The skip and the gate: :math:`(y + D\,u) \cdot \mathrm{SiLU}(z)` (each optional)."""
    if D is not None:
        y = y + u * D[None, :, None]
    if z is not None:
        y = y * F.silu(z)
    return y


def selective_scan_reference(
    u: torch.Tensor,
    delta: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    D: torch.Tensor | None = None,
    z: torch.Tensor | None = None,
    delta_bias: torch.Tensor | None = None,
    delta_softplus: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Output (B, E, L) and last state (B, E, N), one time step after the other."""
    dt = discretize(delta, delta_bias, delta_softplus)
    h = u.new_zeros(u.shape[0], u.shape[1], A.shape[1])
    ys = []
    for t in range(u.shape[2]):
        decay = torch.exp(dt[:, :, t, None] * A[None])  # (B, E, N)
        h = decay * h + (dt[:, :, t] * u[:, :, t])[:, :, None] * B[:, None, :, t]
        ys.append((h * C[:, None, :, t]).sum(-1))
    y = torch.stack(ys, dim=-1)
    return finish(y, u, D, z), h
