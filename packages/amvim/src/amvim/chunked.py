r"""The ``chunked`` backend: the selective scan with log-space prefix products inside chunks
(the CPU training path).

Within a chunk of T steps, with :math:`a_t = \Delta_t A \le 0` (A < 0, Δ > 0) and its prefix
sum :math:`S_t = \sum_{s \le t} a_s`, the recurrence of :mod:`amvim.reference` unrolls to

.. math::
    h_t = e^{S_t}\, h_{\text{start}} + \sum_{s \le t} e^{S_t - S_s}\, \Delta_s B_s u_s ,

where every exponent :math:`S_t - S_s \le 0` (no overflow, unlike :math:`e^{S_t} \cdot e^{-S_s}`).
All chunks are computed at once with :math:`h_{\text{start}} = 0`; a short loop over the L/T
chunks then carries the state across chunk borders. Work O(B·E·N·L·T), memory O(B·E·N·L·T):
the chunk length T trades vectorisation for memory. Differentiable by torch autograd.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from amvim.reference import discretize, finish

__all__ = ["selective_scan_chunked"]


def selective_scan_chunked(
    u: torch.Tensor,
    delta: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    D: torch.Tensor | None = None,
    z: torch.Tensor | None = None,
    delta_bias: torch.Tensor | None = None,
    delta_softplus: bool = True,
    chunk: int = 16,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Output (B, E, L) and last state (B, E, N), chunk by chunk of ``chunk`` steps."""
    batch, E, L = u.shape
    N = A.shape[1]
    dt = discretize(delta, delta_bias, delta_softplus)
    T = min(chunk, L)
    pad = (-L) % T
    if pad:  # Δ = 0 on the padding: no decay and no input, the last state is unchanged
        dt, u_p, B_p, C_p = (F.pad(x, (0, pad)) for x in (dt, u, B, C))
    else:
        u_p, B_p, C_p = u, B, C
    n = (L + pad) // T
    # (batch, E, n, T, N): log-decays a_t and inputs Δ_t B_t u_t
    a = dt.reshape(batch, E, n, T)[..., None] * A[:, None, None, :]
    x = (dt * u_p).reshape(batch, E, n, T)[..., None] * B_p.reshape(batch, 1, N, n, T).permute(
        0, 1, 3, 4, 2
    )
    S = a.cumsum(dim=3)
    # e^{S_t - S_s} for s <= t, 0 above the diagonal: (batch, E, n, N, T, T)
    St = S.transpose(3, 4)
    causal = torch.ones(T, T, dtype=torch.bool, device=u.device).tril()
    diff = (St[..., :, None] - St[..., None, :]).masked_fill(~causal, float("-inf"))
    local = torch.einsum("benkts,bensk->bentk", diff.exp(), x)  # states from h_start = 0
    # carry the state across chunk borders
    starts = []
    h = u.new_zeros(batch, E, N)
    for c in range(n):
        starts.append(h)
        h = torch.exp(S[:, :, c, -1]) * h + local[:, :, c, -1]
    start = torch.stack(starts, dim=2)  # (batch, E, n, N)
    states = local + torch.exp(S) * start[:, :, :, None, :]
    Cc = C_p.reshape(batch, N, n, T).permute(0, 2, 3, 1)  # (batch, n, T, N)
    y = torch.einsum("bentk,bntk->bent", states, Cc).reshape(batch, E, n * T)[..., :L]
    return finish(y, u, D, z), h
