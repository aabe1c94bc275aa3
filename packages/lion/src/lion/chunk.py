r"""The ``chunk`` backend: LION's chunkwise form in plain torch.

The sequence is cut into chunks of :math:`C` positions (the last may be short). Inside a chunk the
dense :math:`C\times C` block of :math:`(qk^\top)\odot M` is built from that chunk's decays; across
chunks a forward state :math:`S^F` (the chunks before) and a backward state :math:`S^B` (the
chunks after), each :math:`d\times(d+1)` per head, carry the rest:

.. math:: y_i = q_i^\top\Big(\Lambda^F_i S^F_{<c} + \Lambda^B_i S^B_{>c}\Big) + \text{intra-chunk},

with :math:`\Lambda^F_i=\lambda_{\mathrm{start}}\cdots\lambda_{i-1}` and
:math:`\Lambda^B_i=\lambda_{i+1}\cdots\lambda_{\mathrm{end}}`. Time :math:`O(NCd+Nd^2)`, memory
:math:`O(C^2+d^2)` per chunk and head. Equal to :func:`lion.reference.reference_parts` (tested
to 1e-10 in float64).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from lion.reference import mask, ones_column

__all__ = ["chunk_parts"]


def chunk_parts(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_lambda: torch.Tensor | None,
    chunk_size: int,
) -> torch.Tensor:
    """Unnormalised ``[num, den]`` ``(B, H, N, d + 1)`` of checked ``q, k, v (B, H, N, d)`` and
    decays ``(B, H, N)`` (None: all ones), chunks of ``chunk_size``."""
    B, H, N, d = q.shape
    C = chunk_size
    n_chunks = -(-N // C)
    pad = n_chunks * C - N
    ll = q.new_zeros(B, H, N) if log_lambda is None else log_lambda
    # Padded keys are zero (contribute nothing) and padded queries are dropped at the end.
    qc, kc, vc = (
        F.pad(x, (0, 0, 0, pad)).reshape(B, H, n_chunks, C, -1) for x in (q, k, ones_column(v))
    )
    lc = F.pad(ll, (0, pad)).reshape(B, H, n_chunks, C)
    incl = torch.cumsum(lc, -1)  # sum of log lambda from the chunk start to t, inclusive
    excl = incl - lc
    total = incl[..., -1:]  # whole chunk
    # intra-chunk: the dense C x C block of (q k^T) * M, M built from this chunk's decays only
    out = (qc @ kc.transpose(-1, -2) * mask(lc)) @ vc
    # forward: keys weighted by lambda_j..lambda_end, queries by lambda_start..lambda_{i-1}
    key_f = (total - excl).exp()[..., None] * kc
    qry_f = excl.exp()[..., None] * qc
    # backward: keys weighted by lambda_start..lambda_j, queries by lambda_{i+1}..lambda_end
    key_b = incl.exp()[..., None] * kc
    qry_b = (total - incl).exp()[..., None] * qc
    decay = total.exp()[..., None]  # (B, H, n_chunks, 1, 1)
    inter = []
    state = q.new_zeros(B, H, d, d + 1)
    for c in range(n_chunks):  # forward state S^F_{<c}
        inter.append(qry_f[:, :, c] @ state)
        state = decay[:, :, c] * state + key_f[:, :, c].transpose(-1, -2) @ vc[:, :, c]
    state = q.new_zeros(B, H, d, d + 1)
    for c in range(n_chunks - 1, -1, -1):  # backward state S^B_{>c}
        inter[c] = inter[c] + qry_b[:, :, c] @ state
        state = decay[:, :, c] * state + key_b[:, :, c].transpose(-1, -2) @ vc[:, :, c]
    out = out + torch.stack(inter, 2)
    return out.reshape(B, H, n_chunks * C, d + 1)[:, :, :N]
