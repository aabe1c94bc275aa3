r"""LION bidirectional linear attention: the masks and the three equivalent forms.

All functions take ``q, k`` after the feature map :math:`\phi` and ``v``, each ``(B, H, N, d)``, and
the log-decays ``log_lambda`` of shape ``(B, H, N)`` (``None`` for LION-LIT, :math:`\lambda=1`).

Mask (per head, :math:`N\times N`): :math:`M_{ii}=1` and :math:`M_{ij}=\prod_{t\in(i,j]}\lambda_t`,
the product running from :math:`i` exclusive to :math:`j` inclusive in either direction, so
:math:`M_{ij}=\lambda_j\cdots\lambda_{i-1}` for :math:`i>j` and :math:`\lambda_{i+1}\cdots\lambda_j`
for :math:`i<j`. :math:`M = M^F + M^B - I` with :math:`M^F` lower and :math:`M^B` upper triangular.
It is built from :math:`c=\mathrm{cumsum}(\log\lambda)` as exponentials of differences, never as a
raw product, with :math:`\log\lambda` clamped at :math:`-10^4`.

1. Full form: :math:`A=(qk^\top)\odot M`, :math:`Y=(A/(A\mathbf 1+\epsilon))V`.
2. RNN form: :math:`S^F_i=\lambda_{i-1}S^F_{i-1}+k_iv_i^\top`,
   :math:`S^B_i=\lambda_{i+1}S^B_{i+1}+k_iv_i^\top` (and :math:`z` the same with :math:`k_i`),
   :math:`y_i=q_i^\top(S^F_i+S^B_i-k_iv_i^\top)/(q_i^\top(z^F_i+z^B_i-k_i)+\epsilon)`: an
   :math:`O(d^2)` state per head.
3. Chunkwise form: a dense :math:`C\times C` block of :math:`(qk^\top)\odot M` inside each chunk,
   plus a forward state carried from the chunks before and a backward state from those after.

The denominators travel with the numerators as a ones column appended to ``v``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from paperkit import Described, param_error

__all__ = [
    "LOG_LAMBDA_MIN",
    "backward_mask",
    "check_qkv",
    "chunk_parts",
    "decay_mask",
    "forward_mask",
    "full_parts",
    "lion_chunk",
    "lion_full",
    "lion_mask",
    "lion_rnn",
    "masked_attention",
    "normalize",
    "rnn_parts",
]

#: Lower clamp of :math:`\log\lambda` (the spec's -1e4), so that exponentials of cumsum
#: differences never see -inf - (-inf).
LOG_LAMBDA_MIN = -1e4


def _shape(x: torch.Tensor) -> Described:
    return Described(f"a tensor of shape {tuple(x.shape)}")


def check_qkv(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_lambda: torch.Tensor | None, owner: str
) -> torch.Tensor | None:
    r"""Validate shapes and decays; return ``log_lambda`` clamped at :data:`LOG_LAMBDA_MIN`.

    ``q, k, v`` must be 4-D ``(B, H, N, d)`` with equal shapes; ``log_lambda`` ``(B, H, N)``, finite
    and :math:`\le 0` (that is, :math:`\lambda\in(0,1]`).
    """
    if q.dim() != 4:
        raise param_error("q", owner, "a 4-D tensor (B, H, N, d)", _shape(q))
    if k.shape != q.shape:
        raise param_error("k", owner, f"of the shape of q, {tuple(q.shape)}", _shape(k))
    if v.shape != q.shape:
        raise param_error("v", owner, f"of the shape of q, {tuple(q.shape)}", _shape(v))
    if log_lambda is None:
        return None
    if log_lambda.shape != q.shape[:3]:
        raise param_error(
            "log_lambda", owner, f"of shape (B, H, N) = {tuple(q.shape[:3])}", _shape(log_lambda)
        )
    return _check_decays(log_lambda, owner)


def _check_decays(log_lambda: torch.Tensor, owner: str) -> torch.Tensor:
    if log_lambda.dim() < 1:
        raise param_error("log_lambda", owner, "a tensor (..., N)", _shape(log_lambda))
    bad = torch.isnan(log_lambda) | (log_lambda > 0) | torch.isneginf(log_lambda)
    if bool(bad.any()):
        value = log_lambda[bad][0].item()
        raise param_error(
            "log_lambda",
            owner,
            "the log of a decay lambda in (0, 1], i.e. finite and <= 0",
            Described(f"log lambda = {value}, lambda = {torch.tensor(value).exp().item()}"),
        )
    return log_lambda.clamp(min=LOG_LAMBDA_MIN)


def _half_mask(log_lambda: torch.Tensor, lower: bool) -> torch.Tensor:
    # In base 2 (c = cumsum(log2 lambda), mask = 2^(difference)): lambda = 1/2^k gives exact powers.
    c = torch.cumsum(log_lambda.clamp(min=LOG_LAMBDA_MIN) / math.log(2), -1)
    n = log_lambda.shape[-1]
    ones = torch.ones(n, n, dtype=torch.bool, device=log_lambda.device)
    if lower:
        c = c - log_lambda.clamp(min=LOG_LAMBDA_MIN) / math.log(2)  # c_{i-1}
        diff, keep = c[..., :, None] - c[..., None, :], ones.tril()
    else:
        diff, keep = c[..., None, :] - c[..., :, None], ones.triu()
    return diff.masked_fill(~keep, float("-inf")).exp2()


def forward_mask(log_lambda: torch.Tensor) -> torch.Tensor:
    r"""Lower-triangular :math:`M^F_{ij}=\lambda_j\cdots\lambda_{i-1}` for :math:`i\ge j` (1 on the
    diagonal), as :math:`\exp(c_{i-1}-c_{j-1})`; ``(B, H, N) -> (B, H, N, N)``."""
    return _half_mask(_check_decays(log_lambda, "forward_mask"), lower=True)


def backward_mask(log_lambda: torch.Tensor) -> torch.Tensor:
    r"""Upper-triangular :math:`M^B_{ij}=\lambda_{i+1}\cdots\lambda_j` for :math:`i\le j` (1 on the
    diagonal), as :math:`\exp(c_j-c_i)`; ``(B, H, N) -> (B, H, N, N)``."""
    return _half_mask(_check_decays(log_lambda, "backward_mask"), lower=False)


def _lion_mask(log_lambda: torch.Tensor) -> torch.Tensor:
    eye = torch.eye(log_lambda.shape[-1], dtype=log_lambda.dtype, device=log_lambda.device)
    return _half_mask(log_lambda, lower=True) + _half_mask(log_lambda, lower=False) - eye


def decay_mask(log_lambda: torch.Tensor, n: int) -> torch.Tensor:
    r"""The LION-D mask :math:`M_{ij}=\lambda^{|i-j|}` for one decay per head,
    ``(...,) -> (..., n, n)``, as integer powers (exact where :math:`\lambda` is a power of two);
    equals :func:`lion_mask` of a constant ``log_lambda``."""
    idx = torch.arange(n, device=log_lambda.device)
    dist = (idx[:, None] - idx[None, :]).abs().to(log_lambda.dtype)
    return log_lambda.exp()[..., None, None] ** dist


def lion_mask(log_lambda: torch.Tensor) -> torch.Tensor:
    r"""The bidirectional LION mask :math:`M=M^F+M^B-I`, ``(B, H, N) -> (B, H, N, N)``.

    For LION-D (constant :math:`\lambda`) this is :math:`\lambda^{|i-j|}`. The exponentials are
    taken in base 2, so that :math:`\lambda=2^{-k}` gives exact powers.
    """
    return _lion_mask(_check_decays(log_lambda, "lion_mask"))


def _ones_column(v: torch.Tensor) -> torch.Tensor:
    return F.pad(v, (0, 1), value=1.0)


def normalize(parts: torch.Tensor, eps: float) -> torch.Tensor:
    """``(..., d + 1)`` numerator and denominator (last column) -> ``num / (den + eps)``."""
    return parts[..., :-1] / (parts[..., -1:] + eps)


def masked_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None, eps: float = 1e-6
) -> torch.Tensor:
    r"""Normalised masked linear attention :math:`Y=(A/(A\mathbf 1+\epsilon))V`,
    :math:`A=(qk^\top)\odot M` for any mask ``(B, H, N, N)`` (``None``: all ones)."""
    return normalize(full_parts(q, k, v, mask), eps)


def full_parts(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None
) -> torch.Tensor:
    """Unnormalised full form: ``[A V, A 1]`` of shape ``(B, H, N, d + 1)``."""
    a = q @ k.transpose(-1, -2)
    if mask is not None:
        a = a * mask
    return a @ _ones_column(v)


def lion_full(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_lambda: torch.Tensor | None = None,
    *,
    eps: float = 1e-6,
) -> torch.Tensor:
    r"""Full (attention) form: :math:`Y=(A/(A\mathbf 1+\epsilon))V` with :math:`A=(qk^\top)\odot M`,
    :math:`O(N^2d)` time and :math:`O(N^2)` memory per head."""
    ll = check_qkv(q, k, v, log_lambda, "lion_full")
    return masked_attention(q, k, v, None if ll is None else _lion_mask(ll), eps)


def rnn_parts(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_lambda: torch.Tensor | None
) -> torch.Tensor:
    """Unnormalised RNN form, one forward and one backward recurrence over ``(d, d + 1)`` states."""
    B, H, N, d = q.shape
    vv = _ones_column(v)
    lam = None if log_lambda is None else log_lambda.exp()
    out = q.new_zeros(B, H, N, d + 1)
    for reverse in (False, True):
        state = q.new_zeros(B, H, d, d + 1)
        steps = range(N - 1, -1, -1) if reverse else range(N)
        prev = None
        for i in steps:
            if lam is not None and prev is not None:  # lambda_{i-1} forward, lambda_{i+1} backward
                state = lam[:, :, prev, None, None] * state
            kv = k[:, :, i, :, None] * vv[:, :, i, None, :]
            state = state + kv
            if reverse:  # the diagonal k_i v_i^T was counted by both directions
                out[:, :, i] += (q[:, :, i, :, None] * (state - kv)).sum(-2)
            else:
                out[:, :, i] += (q[:, :, i, :, None] * state).sum(-2)
            prev = i
    return out


def lion_rnn(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_lambda: torch.Tensor | None = None,
    *,
    eps: float = 1e-6,
) -> torch.Tensor:
    r"""RNN form: a forward and a backward linear recurrence with an :math:`O(d^2)` state per head,
    :math:`y_i=q_i^\top(S^F_i+S^B_i-k_iv_i^\top)/(q_i^\top(z^F_i+z^B_i-k_i)+\epsilon)`."""
    ll = check_qkv(q, k, v, log_lambda, "lion_rnn")
    return normalize(rnn_parts(q, k, v, ll), eps)


def chunk_parts(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_lambda: torch.Tensor | None,
    chunk_size: int,
) -> torch.Tensor:
    """Unnormalised chunkwise form (pure torch): intra-chunk dense block plus the forward and
    backward inter-chunk states; memory :math:`O(C^2+d^2)` per chunk and head."""
    B, H, N, d = q.shape
    C = chunk_size
    n_chunks = -(-N // C)
    pad = n_chunks * C - N
    ll = q.new_zeros(B, H, N) if log_lambda is None else log_lambda
    # Padded keys are zero (contribute nothing) and padded queries are dropped at the end.
    qc, kc, vc = (
        F.pad(x, (0, 0, 0, pad)).reshape(B, H, n_chunks, C, -1) for x in (q, k, _ones_column(v))
    )
    lc = F.pad(ll, (0, pad)).reshape(B, H, n_chunks, C)
    incl = torch.cumsum(lc, -1)  # sum of log lambda from the chunk start to t, inclusive
    excl = incl - lc
    total = incl[..., -1:]  # whole chunk
    # intra-chunk: the dense C x C block of (q k^T) * M, M built from this chunk's decays only
    out = (qc @ kc.transpose(-1, -2) * _lion_mask(lc)) @ vc
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


def lion_chunk(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_lambda: torch.Tensor | None = None,
    chunk_size: int = 64,
    *,
    eps: float = 1e-6,
) -> torch.Tensor:
    r"""Chunkwise form with chunk size :math:`C` (the last chunk may be short):
    :math:`O(NCd+Nd^2)` time, equal to :func:`lion_full` and :func:`lion_rnn`."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise param_error("chunk_size", "lion_chunk", "an integer >= 1", chunk_size)
    ll = check_qkv(q, k, v, log_lambda, "lion_chunk")
    return normalize(chunk_parts(q, k, v, ll, chunk_size), eps)
