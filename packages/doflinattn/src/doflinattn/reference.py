r"""The plain readable paths of normalised linear attention, on features (what every fast path
is tested against).

.. math::
    o_i = \frac{\phi(q_i)^\top \sum_{j \in J(i)} \phi(k_j) v_j^\top}
               {\phi(q_i)^\top \sum_{j \in J(i)} \phi(k_j) + \varepsilon},

with :math:`J(i)` all keys (non-causal: two matmuls) or :math:`j \le i` (causal: prefix sums of
the outer products :math:`\phi(k_j) v_j^\top`). Padded keys enter with :math:`\phi(k_j) = 0`.
"""

from __future__ import annotations

import torch

__all__ = ["linear_attention_features", "naive_kernel_attention"]


def linear_attention_features(
    phi_q: torch.Tensor, phi_k: torch.Tensor, v: torch.Tensor, causal: bool, eps: float
) -> torch.Tensor:
    """Normalised linear attention on features: ``phi_q``, ``phi_k`` (B, H, N, m), ``v``
    (B, H, N, e) -> (B, H, N, e). O(N m e) time; the causal path holds (B, H, N, m, e).

    Half-precision inputs (bf16, fp16, as under ``torch.autocast``) are summed in fp32, autocast
    off (a bf16 prefix sum over N rows loses the state), and the result is returned in their
    promoted dtype."""
    out_dtype = torch.promote_types(torch.promote_types(phi_q.dtype, phi_k.dtype), v.dtype)
    work = torch.promote_types(out_dtype, torch.float32)
    if work != out_dtype or torch.is_autocast_enabled(v.device.type):
        with torch.autocast(v.device.type, enabled=False):
            out = linear_attention_features(phi_q.to(work), phi_k.to(work), v.to(work), causal, eps)
        return out.to(out_dtype)
    if causal:
        kv = torch.cumsum(phi_k[..., :, None] * v[..., None, :], dim=2)  # (B, H, N, m, e)
        num = torch.einsum("bhnm,bhnme->bhne", phi_q, kv)
        den = (phi_q * torch.cumsum(phi_k, dim=2)).sum(-1)
    else:
        num = phi_q @ (phi_k.transpose(-1, -2) @ v)
        den = phi_q @ phi_k.sum(2)[..., None]
        den = den[..., 0]
    return num / (den[..., None] + eps)


def naive_kernel_attention(
    phi_q: torch.Tensor,
    phi_k: torch.Tensor,
    v: torch.Tensor,
    causal: bool,
    eps: float,
    key_padding_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    r"""The O(N^2) form: :math:`A_{ij} = \phi(q_i)\cdot\phi(k_j)` masked, then
    :math:`o = A v / (A\mathbf{1} + \varepsilon)`. ``key_padding_mask`` (B, N), True = padding."""
    a = phi_q @ phi_k.transpose(-1, -2)
    n = a.shape[-1]
    keep = torch.ones(n, n, dtype=torch.bool, device=a.device)
    if causal:
        keep = torch.tril(keep)
    keep = keep.expand(a.shape)
    if key_padding_mask is not None:
        keep = keep & ~key_padding_mask[:, None, None, :]
    a = torch.where(keep, a, torch.zeros_like(a))
    return (a @ v) / (a.sum(-1, keepdim=True) + eps)
