r"""The reference path: LION's bidirectional decay mask and the full (attention) form.

Everything takes ``q, k`` after the feature map :math:`\phi` and ``v``, each ``(B, H, N, d)``, and
the log-decays ``log_lambda`` of shape ``(B, H, N)`` (``None`` for LION-LIT, :math:`\lambda=1`).

Mask (per head, :math:`N\times N`): :math:`M_{ii}=1` and :math:`M_{ij}=\prod_{t\in(i,j]}\lambda_t`,
the product running from :math:`i` exclusive to :math:`j` inclusive in either direction, so
:math:`M_{ij}=\lambda_j\cdots\lambda_{i-1}` for :math:`i>j` and :math:`\lambda_{i+1}\cdots\lambda_j`
for :math:`i<j`. :math:`M = M^F + M^B - I` with :math:`M^F` lower and :math:`M^B`
upper triangular. It is built from :math:`c=\mathrm{cumsum}(\log\lambda)` as exponentials of
differences, never as a raw product, with :math:`\log\lambda` clamped at :math:`-10^4`.

Full form: :math:`A=(qk^\top)\odot M`, :math:`Y=(A/(A\mathbf 1+\epsilon))V`, :math:`O(N^2d)` time
and :math:`O(N^2)` memory per head. The denominators travel with the numerators as a ones column
appended to ``v``: every path returns the unnormalised ``[A V, A 1]`` of shape ``(B, H, N, d + 1)``
and :func:`normalize` divides. The fast paths (:mod:`lion.chunk`, :mod:`lion.rnn`,
:mod:`lion.kernels.chunk_triton`) are tested against this one.

NaN policy: the public mask functions refuse NaN and inf in ``log_lambda`` (``ValueError``), as
:func:`lion.lion_attention` does for every input.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from paperkit import Described, check_int, check_tensor, param_error

__all__ = [
    "LOG_LAMBDA_MIN",
    "backward_mask",
    "check_decays",
    "decay_mask",
    "forward_mask",
    "full_parts",
    "half_mask",
    "lion_mask",
    "mask",
    "masked_attention",
    "normalize",
    "ones_column",
    "powers",
    "reference_parts",
]

#: Lower clamp of :math:`\log\lambda`, so that exponentials of cumsum differences never see
#: :math:`-\infty - (-\infty)`.
LOG_LAMBDA_MIN = -1e4


def check_decays(name: str, owner: str, log_lambda: torch.Tensor, **checks) -> torch.Tensor:
    r"""``log_lambda`` if it is a finite floating tensor :math:`\le 0` (:math:`\lambda\in(0,1]`)
    of the given shape (``shape=``, ``dims=`` as :func:`paperkit.check_tensor`), else the worded
    error."""
    check_tensor(name, owner, log_lambda, **checks)
    if log_lambda.dim() < 1:
        raise param_error(name, owner, "a tensor (..., N)", Described("a 0-D tensor"))
    if bool((log_lambda > 0).any()):
        value = float(log_lambda[log_lambda > 0][0])
        got = Described(f"log lambda = {value:g}, lambda = {math.exp(value):g}")
        raise param_error(name, owner, "the log of a decay lambda in (0, 1], i.e. <= 0", got)
    return log_lambda


def half_mask(log_lambda: torch.Tensor, lower: bool) -> torch.Tensor:
    """:math:`M^F` (``lower``) or :math:`M^B` of checked decays (:func:`forward_mask`)."""
    # In base 2 (c = cumsum(log2 lambda), mask = 2^(difference)): lambda = 1/2^k gives exact powers.
    log2 = log_lambda.clamp(min=LOG_LAMBDA_MIN) / math.log(2)
    c = torch.cumsum(log2, -1)
    n = log_lambda.shape[-1]
    ones = torch.ones(n, n, dtype=torch.bool, device=log_lambda.device)
    if lower:
        c = c - log2  # c_{i-1}
        diff, keep = c[..., :, None] - c[..., None, :], ones.tril()
    else:
        diff, keep = c[..., None, :] - c[..., :, None], ones.triu()
    return diff.masked_fill(~keep, float("-inf")).exp2()


def mask(log_lambda: torch.Tensor) -> torch.Tensor:
    """:func:`lion_mask` on checked decays (the paths' inner step)."""
    eye = torch.eye(log_lambda.shape[-1], dtype=log_lambda.dtype, device=log_lambda.device)
    return half_mask(log_lambda, lower=True) + half_mask(log_lambda, lower=False) - eye


def forward_mask(log_lambda: torch.Tensor) -> torch.Tensor:
    r"""Lower-triangular :math:`M^F_{ij}=\lambda_j\cdots\lambda_{i-1}` for :math:`i\ge j` (1 on the
    diagonal), as :math:`\exp(c_{i-1}-c_{j-1})`.

    Shapes: ``log_lambda (..., N) -> (..., N, N)``. NaN or inf is refused.
    """
    return half_mask(check_decays("log_lambda", "forward_mask", log_lambda), lower=True)


def backward_mask(log_lambda: torch.Tensor) -> torch.Tensor:
    r"""Upper-triangular :math:`M^B_{ij}=\lambda_{i+1}\cdots\lambda_j` for :math:`i\le j` (1 on the
    diagonal), as :math:`\exp(c_j-c_i)`.

    Shapes: ``log_lambda (..., N) -> (..., N, N)``. NaN or inf is refused.
    """
    return half_mask(check_decays("log_lambda", "backward_mask", log_lambda), lower=False)


def lion_mask(log_lambda: torch.Tensor) -> torch.Tensor:
    r"""The bidirectional LION mask :math:`M=M^F+M^B-I`.

    For LION-D (constant :math:`\lambda`) this is :math:`\lambda^{|i-j|}`. The exponentials are
    taken in base 2, so that :math:`\lambda=2^{-k}` gives exact powers.

    Shapes: ``log_lambda (..., N) -> (..., N, N)`` (``(B, H, N) -> (B, H, N, N)`` in the layer).
    NaN, inf and :math:`\log\lambda > 0` are refused (``ValueError``).

    >>> import torch
    >>> lion_mask(torch.full((3,), 0.5).log())
    tensor([[1.0000, 0.5000, 0.2500],
            [0.5000, 1.0000, 0.5000],
            [0.2500, 0.5000, 1.0000]])
    """
    return mask(check_decays("log_lambda", "lion_mask", log_lambda))


def decay_mask(log_lambda: torch.Tensor, n: int) -> torch.Tensor:
    r"""The LION-D mask :math:`M_{ij}=\lambda^{|i-j|}` for one decay per head, as integer powers
    (exact where :math:`\lambda` is a power of two); equals :func:`lion_mask` of a constant
    ``log_lambda``.

    Shapes: ``log_lambda (...,) -> (..., n, n)``. NaN or inf is refused.
    """
    n = check_int("n", "decay_mask", n, low=1)
    log_lambda = check_tensor("log_lambda", "decay_mask", log_lambda, nonempty=False)
    return powers(log_lambda, n)


def powers(log_lambda: torch.Tensor, n: int) -> torch.Tensor:
    """:func:`decay_mask` on checked decays."""
    idx = torch.arange(n, device=log_lambda.device)
    dist = (idx[:, None] - idx[None, :]).abs().to(log_lambda.dtype)
    return log_lambda.exp()[..., None, None] ** dist


def ones_column(v: torch.Tensor) -> torch.Tensor:
    """``v (..., d)`` with a column of ones appended, ``(..., d + 1)``: the denominators ride
    along with the numerators."""
    return F.pad(v, (0, 1), value=1.0)


def normalize(parts: torch.Tensor, eps: float) -> torch.Tensor:
    """``(..., d + 1)`` numerator and denominator (last column) -> ``num / (den + eps)``."""
    return parts[..., :-1] / (parts[..., -1:] + eps)


def full_parts(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, weights: torch.Tensor | None
) -> torch.Tensor:
    """Unnormalised full form ``[A V, A 1]`` ``(B, H, N, d + 1)``, ``A = (q k^T) * weights``
    (``None``: all ones)."""
    a = q @ k.transpose(-1, -2)
    if weights is not None:
        a = a * weights
    return a @ ones_column(v)


def reference_parts(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_lambda: torch.Tensor | None
) -> torch.Tensor:
    """The reference backend: :func:`full_parts` with the LION mask of checked decays."""
    return full_parts(q, k, v, None if log_lambda is None else mask(log_lambda))


def masked_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    weights: torch.Tensor | None,
    eps: float = 1e-6,
) -> torch.Tensor:
    r"""Normalised masked linear attention :math:`Y=(A/(A\mathbf 1+\epsilon))V`,
    :math:`A=(qk^\top)\odot W` for any weights ``W`` (``None``: all ones; the causal baseline
    uses :math:`M^F`).

    Shapes: ``q, k, v (B, H, N, d)``, ``weights (B, H, N, N)`` -> ``(B, H, N, d)``. NaN
    propagates (a building block on checked inputs).
    """
    return normalize(full_parts(q, k, v, weights), eps)
