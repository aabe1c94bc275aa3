"""Synthetic sequence tasks, generated from a seed (nothing is downloaded).

- :func:`mqar`: multi-query associative recall (Zoology, Arora et al. 2023): key-value pairs,
  then the keys again at random later positions; at each such position the target is its value.
- :func:`contrast`: random vectors with two marked positions a < b; the target is
  :math:`v_a - v_b`, a signed mix that a convex (softmax or positive linear) attention layer
  cannot output.
"""

from __future__ import annotations

import numpy as np
import torch

from paperkit import param_error

__all__ = ["IGNORE", "contrast", "mqar"]

#: Target value at positions that are not scored (``torch.nn.functional.cross_entropy`` default).
IGNORE = -100


def _positive(owner: str, **values: int) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise param_error(name, owner, "a positive integer", value)


def mqar(
    n: int, seq_len: int, num_kv: int, vocab: int, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Multi-query associative recall.

    Each sequence starts with ``num_kv`` pairs ``k_1 v_1 ... k_n v_n`` (distinct keys from
    ``[1, vocab/2)``, values from ``[vocab/2, vocab)``); the remaining positions hold the filler
    token 0, except ``num_kv`` random distinct positions where the keys appear again (in random
    order). The target at such a position is the key's value; elsewhere it is :data:`IGNORE`.

    Returns:
        ``tokens`` (n, seq_len) int64 and ``targets`` (n, seq_len) int64.
    """
    _positive("mqar", n=n, seq_len=seq_len, num_kv=num_kv, vocab=vocab)
    if 3 * num_kv > seq_len:
        raise param_error("seq_len", "mqar", f"at least 3 * num_kv = {3 * num_kv}", seq_len)
    if num_kv >= vocab // 2:
        raise param_error(
            "vocab", "mqar", f"more than 2 * (num_kv + 1) = {2 * (num_kv + 1)}", vocab
        )
    rng = np.random.default_rng(seed)
    half = vocab // 2
    keys = np.argsort(rng.random((n, half - 1)), axis=1)[:, :num_kv] + 1  # distinct, in [1, half)
    values = rng.integers(half, vocab, size=(n, num_kv))
    tokens = np.zeros((n, seq_len), dtype=np.int64)
    targets = np.full((n, seq_len), IGNORE, dtype=np.int64)
    tokens[:, 0 : 2 * num_kv : 2] = keys
    tokens[:, 1 : 2 * num_kv : 2] = values
    free = seq_len - 2 * num_kv
    positions = 2 * num_kv + np.argsort(rng.random((n, free)), axis=1)[:, :num_kv]
    order = np.argsort(rng.random((n, num_kv)), axis=1)  # which key is asked where
    rows = np.arange(n)[:, None]
    tokens[rows, positions] = keys[rows, order]
    targets[rows, positions] = values[rows, order]
    return torch.from_numpy(tokens), torch.from_numpy(targets)


def contrast(
    n: int, seq_len: int, value_dim: int, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """The contrast task: output :math:`v_a - v_b` for the two marked positions a < b.

    Returns:
        ``x`` (n, seq_len, value_dim + 2) float32: the vectors :math:`v_t\\sim N(0, I)` followed by
        two marker channels (1 at a in the first, 1 at b in the second), and ``y`` (n, value_dim)
        float32, the target :math:`v_a - v_b`, read out at the last position.
    """
    _positive("contrast", n=n, seq_len=seq_len, value_dim=value_dim)
    if seq_len < 2:
        raise param_error("seq_len", "contrast", "at least 2", seq_len)
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, seq_len, value_dim)).astype(np.float32)
    pair = np.sort(np.argsort(rng.random((n, seq_len)), axis=1)[:, :2], axis=1)
    a, b = pair[:, 0], pair[:, 1]
    rows = np.arange(n)
    markers = np.zeros((n, seq_len, 2), dtype=np.float32)
    markers[rows, a, 0] = 1.0
    markers[rows, b, 1] = 1.0
    y = v[rows, a] - v[rows, b]
    return torch.from_numpy(np.concatenate([v, markers], axis=-1)), torch.from_numpy(y)
