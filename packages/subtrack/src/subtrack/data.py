"""A seeded synthetic character-level corpus from a small random grammar.

Sentences are ``<det> <adj>* <noun> <verb> <det> <noun> [<prep> <det> <noun>] .`` over word lists
drawn once per seed; verbs agree with their subject's number, so a model must learn spelling,
word order and agreement, which gives a smooth, non-trivial loss curve.
"""

from __future__ import annotations

import numpy as np
import torch

from paperkit import check_int, check_memory

__all__ = ["ALPHABET", "synthetic_corpus"]

ALPHABET = "abcdefghijklmnopqrstuvwxyz .\n"
#: Bytes per token while the corpus is built (its text, a list of ids and the int64 tensor).
_BYTES_PER_TOKEN = 32
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _words(rng: np.random.Generator, count: int, low: int, high: int) -> list[str]:
    return [
        "".join(rng.choice(list(_LETTERS), size=int(rng.integers(low, high + 1))))
        for _ in range(count)
    ]


def synthetic_corpus(n_tokens: int, seed: int = 0) -> torch.Tensor:
    """``n_tokens`` character ids (int64, values in ``[0, len(ALPHABET))``) of grammar text.

    ``n_tokens >= 1`` (its text, list and tensor must fit in memory) and ``seed >= 0``.

    >>> "".join(ALPHABET[i] for i in synthetic_corpus(12, seed=0))
    'a kbxybp qwz'
    """
    owner = "synthetic_corpus"
    n_tokens = check_int("n_tokens", owner, n_tokens, low=1)
    check_memory("n_tokens", owner, n_tokens, _BYTES_PER_TOKEN * n_tokens)
    seed = check_int("seed", owner, seed, low=0)
    rng = np.random.default_rng(seed)
    nouns, adjs, preps = _words(rng, 40, 3, 7), _words(rng, 20, 3, 6), _words(rng, 6, 2, 4)
    verbs = _words(rng, 25, 3, 6)
    dets = ["the", "a", "some", "every"]
    pieces: list[str] = []
    total = 0
    while total < n_tokens:
        plural = bool(rng.integers(2))
        words = [dets[int(rng.integers(4))]]
        words += [adjs[int(i)] for i in rng.integers(0, 20, size=int(rng.integers(0, 3)))]
        words.append(nouns[int(rng.integers(40))] + ("s" if plural else ""))
        words.append(verbs[int(rng.integers(25))] + ("" if plural else "s"))
        words += [dets[int(rng.integers(4))], nouns[int(rng.integers(40))]]
        if rng.random() < 0.4:
            words += [preps[int(rng.integers(6))], dets[int(rng.integers(4))]]
            words.append(nouns[int(rng.integers(40))])
        sentence = " ".join(words) + (" .\n" if rng.random() < 0.2 else " . ")
        pieces.append(sentence)
        total += len(sentence)
    text = "".join(pieces)[:n_tokens]
    lookup = {c: i for i, c in enumerate(ALPHABET)}
    return torch.tensor([lookup[c] for c in text], dtype=torch.int64)
