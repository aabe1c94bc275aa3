"""Synthetic sequence tasks, generated from a seed (nothing is downloaded).

- :func:`mqar`: multi-query associative recall (Zoology, Arora et al. 2023): key-value pairs,
  then the keys again at random later positions; at each such position the target is its value.
- :func:`contrast`: random vectors with two marked positions a < b; the target is
  :math:`v_a - v_b`, a signed mix that a convex (softmax or positive linear) attention layer
  cannot output.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from paperkit import check_int, check_memory, param_error

__all__ = ["IGNORE", "contrast", "mqar"]

#: Target value at positions that are not scored (``torch.nn.functional.cross_entropy`` default).
IGNORE = -100


def _check_size(owner: str, sizes: dict[str, int], need: Callable[..., float]) -> None:
    """Refuse sizes whose arrays would not fit (``need(**sizes)`` bytes), naming the argument
    that, set to 1, would shrink the need the most."""
    culprit = min(sizes, key=lambda name: need(**{**sizes, name: 1}))
    check_memory(culprit, owner, sizes[culprit], need(**sizes))


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

    >>> tokens, targets = mqar(1, seq_len=8, num_kv=2, vocab=8, seed=0)
    >>> tokens.shape, int((targets != IGNORE).sum())
    (torch.Size([1, 8]), 2)
    """
    owner = "mqar"
    n = check_int("n", owner, n, low=1)
    seq_len = check_int("seq_len", owner, seq_len, low=1)
    num_kv = check_int("num_kv", owner, num_kv, low=1)
    vocab = check_int("vocab", owner, vocab, low=1)
    seed = check_int("seed", owner, seed, low=0)
    if 3 * num_kv > seq_len:
        raise param_error("seq_len", "mqar", f"at least 3 * num_kv = {3 * num_kv}", seq_len)
    if num_kv >= vocab // 2:
        raise param_error("vocab", "mqar", f"at least 2 * (num_kv + 1) = {2 * (num_kv + 1)}", vocab)
    # float64 random keys over half the vocabulary and over the free positions, int64 outputs
    _check_size(owner, {"n": n, "seq_len": seq_len, "vocab": vocab}, _mqar_bytes)
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


def _mqar_bytes(n: int, seq_len: int, vocab: int) -> float:
    return 8.0 * n * (vocab + 6 * seq_len)


def contrast(
    n: int, seq_len: int, value_dim: int, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """The contrast task: output :math:`v_a - v_b` for the two marked positions a < b.

    Returns:
        ``x`` (n, seq_len, value_dim + 2) float32: the vectors :math:`v_t\\sim N(0, I)` followed by
        two marker channels (1 at a in the first, 1 at b in the second), and ``y`` (n, value_dim)
        float32, the target :math:`v_a - v_b`, read out at the last position.

    >>> x, y = contrast(3, seq_len=4, value_dim=2, seed=0)
    >>> x.shape, y.shape
    (torch.Size([3, 4, 4]), torch.Size([3, 2]))
    """
    owner = "contrast"
    n = check_int("n", owner, n, low=1)
    seq_len = check_int("seq_len", owner, seq_len, low=2)
    value_dim = check_int("value_dim", owner, value_dim, low=1)
    seed = check_int("seed", owner, seed, low=0)
    _check_size(owner, {"n": n, "seq_len": seq_len, "value_dim": value_dim}, _contrast_bytes)
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


def _contrast_bytes(n: int, seq_len: int, value_dim: int) -> float:
    # float64 normals and their float32 copy, markers, the concatenation; float64 sort keys
    return 4.0 * n * seq_len * (5 * value_dim + 8)
