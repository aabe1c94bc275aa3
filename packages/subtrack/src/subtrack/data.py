"""A seeded synthetic character-level corpus from a small random grammar.

Sentences are ``<det> <adj>* <noun> <verb> <det> <noun> [<prep> <det> <noun>] .`` over word lists
drawn once per seed; verbs agree with their subject's number, so a model must learn spelling,
word order and agreement, which gives a smooth, non-trivial loss curve.
"""

from __future__ import annotations

import numpy as np
import torch

from paperkit import param_error

__all__ = ["ALPHABET", "synthetic_corpus"]

ALPHABET = "abcdefghijklmnopqrstuvwxyz .\n"
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _words(rng: np.random.Generator, count: int, low: int, high: int) -> list[str]:
    return [
        "".join(rng.choice(list(_LETTERS), size=int(rng.integers(low, high + 1))))
        for _ in range(count)
    ]


def synthetic_corpus(n_tokens: int, seed: int = 0) -> torch.Tensor:
    """``n_tokens`` character ids (int64, values in ``[0, len(ALPHABET))``) of grammar text."""
    if not (isinstance(n_tokens, int) and n_tokens >= 1):
        raise param_error("n_tokens", "synthetic_corpus", "a positive integer", n_tokens)
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
