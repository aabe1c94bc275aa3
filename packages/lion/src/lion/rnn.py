r"""The ``rnn`` backend: LION as a forward and a backward linear recurrence.

.. math::
   S^F_i=\lambda_{i-1}S^F_{i-1}+k_iv_i^\top,\qquad S^B_i=\lambda_{i+1}S^B_{i+1}+k_iv_i^\top,

and :math:`z` the same with :math:`k_i` (the ones column of ``v`` carries it), then
:math:`y_i=q_i^\top(S^F_i+S^B_i-k_iv_i^\top)/(q_i^\top(z^F_i+z^B_i-k_i)+\epsilon)`: an
:math:`O(d^2)` state per head and direction, :math:`O(Nd^2)` time, a Python loop over the 2N
steps (memory-lean inference, not fast on a CPU). Equal to
:func:`lion.reference.reference_parts` (tested to 1e-10 in float64).
"""

from __future__ import annotations

import torch

from lion.reference import ones_column

__all__ = ["rnn_parts"]


def rnn_parts(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_lambda: torch.Tensor | None
) -> torch.Tensor:
    """Unnormalised ``[num, den]`` ``(B, H, N, d + 1)`` of checked ``q, k, v (B, H, N, d)`` and
    decays ``(B, H, N)`` (None: all ones)."""
    B, H, N, d = q.shape
    vv = ones_column(v)
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
