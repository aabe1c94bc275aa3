r"""Memorisation data sets: n input sequences with random target tokens.

Two kinds, following the paper's experiments (Section 5):

* ``"tokens"`` (full rank): :math:`X_i \in V_{in}^N` drawn uniformly **without repetition** among
  the :math:`|V_{in}|^N` sequences (a data set with two equal inputs and different targets cannot
  be memorised by any model), and :math:`Y_i \in V^N` uniform.
* ``"lowrank"``: real inputs :math:`X_i = Z_i U \in \mathbb{R}^{N \times d_0}` with
  :math:`Z_i \in \mathbb{R}^{N \times r}` standard normal and one fixed
  :math:`U \in \mathbb{R}^{r \times d_0}` with :math:`\mathcal{N}(0, 1/r)` entries (so every entry
  of :math:`X_i` has unit variance whatever :math:`r`); the rows of every :math:`X_i` lie in the
  same :math:`r`-dimensional subspace. Targets as above.
"""

from __future__ import annotations

import torch

from paperkit import check_choice, check_int, check_memory, param_error

__all__ = ["memorization_dataset"]

#: Largest n * N (and n * N * d0) a generated data set may hold.
MAX_ENTRIES = 10**8


def memorization_dataset(
    n: int,
    N: int,
    vocab: int = 8,
    kind: str = "tokens",
    rank: int | None = None,
    d0: int = 32,
    seed: int = 0,
    *,
    input_vocab: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""A data set :math:`\{(X_i, Y_i)\}_{i \le n}` to memorise, reproducible from ``seed``.

    Args:
        n: number of pairs, at least 1.
        N: sequence length of inputs and targets, at least 1.
        vocab: size of the target vocabulary :math:`|V|` (at least 2); also of the input
            vocabulary unless ``input_vocab`` is given.
        kind: ``"tokens"`` (distinct uniform token sequences) or ``"lowrank"`` (real inputs of
            rank ``rank``).
        rank: for ``"lowrank"``, the rank :math:`r \le d_0` (default :math:`d_0`: full rank);
            must be None for ``"tokens"``.
        d0: width of the real input tokens (``"lowrank"``).
        seed: seed of the generator.
        input_vocab: size of the input vocabulary :math:`|V_{in}|` for ``"tokens"`` (default
            ``vocab``); needs :math:`n \le |V_{in}|^N`.

    Returns:
        ``(X, Y)``: ``X`` int64 ``(n, N)`` (tokens) or float32 ``(n, N, d0)`` (lowrank); ``Y``
        int64 ``(n, N)`` with entries in ``[0, vocab)``.

    NaN policy: no float input; the outputs are finite.

    >>> X, Y = memorization_dataset(4, 2, vocab=3, seed=1)
    >>> X.shape, Y.shape, len({tuple(x) for x in X.tolist()})
    (torch.Size([4, 2]), torch.Size([4, 2]), 4)
    >>> memorization_dataset(3, 2, kind="lowrank", rank=2, d0=5)[0].shape
    torch.Size([3, 2, 5])
    """
    owner = "memorization_dataset"
    n = check_int("n", owner, n, low=1)
    N = check_int("N", owner, N, low=1)
    vocab = check_int("vocab", owner, vocab, low=2)
    check_choice("kind", owner, kind, ("tokens", "lowrank"))
    d0 = check_int("d0", owner, d0, low=1)
    seed = check_int("seed", owner, seed, low=0)
    entries = n * N * (d0 if kind == "lowrank" else 1)
    if entries > MAX_ENTRIES:
        raise param_error("n", owner, f"such that the data hold at most {MAX_ENTRIES:g} entries", n)
    check_memory("n", owner, n, 8.0 * entries * 2)
    gen = torch.Generator().manual_seed(seed)
    if kind == "tokens":
        if rank is not None:
            raise param_error("rank", owner, "None for kind='tokens'", rank)
        v_in = vocab if input_vocab is None else check_int("input_vocab", owner, input_vocab, low=2)
        if n > v_in**N:
            raise param_error(
                "n", owner, f"at most input_vocab**N = {v_in**N} (distinct input sequences)", n
            )
        X = _distinct_sequences(n, N, v_in, gen)
    else:
        if input_vocab is not None:
            raise param_error("input_vocab", owner, "None for kind='lowrank'", input_vocab)
        r = d0 if rank is None else check_int("rank", owner, rank, low=1, high=d0)
        U = torch.randn(r, d0, generator=gen, dtype=torch.float64) / r**0.5
        Z = torch.randn(n, N, r, generator=gen, dtype=torch.float64)
        X = (Z @ U).to(torch.float32)
    Y = torch.randint(0, vocab, (n, N), generator=gen)
    return X, Y


def _distinct_sequences(n: int, N: int, v: int, gen: torch.Generator) -> torch.Tensor:
    """n distinct sequences of V^N, uniform without repetition (rejection of repeats)."""
    seen: dict[tuple[int, ...], None] = {}
    while len(seen) < n:
        batch = torch.randint(0, v, (2 * (n - len(seen)), N), generator=gen)
        for row in batch.tolist():
            seen.setdefault(tuple(row), None)
            if len(seen) == n:
                break
    return torch.tensor(list(seen), dtype=torch.int64).reshape(n, N)
