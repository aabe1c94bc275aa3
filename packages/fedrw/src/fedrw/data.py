"""The small-scale federated corpus: real English text that ships with Python (the paper's
experiments, in small).

``pydoc_data.topics.topics`` (79 help topics, about 465k characters in Python 3.11) is joined in
sorted key order and cut into 200-character chunks; the first ``n_chunks`` are used. A random 10 %
of the distinct chunks is held out as the test set; the rest is spread over the clients
uniformly at random. Duplicates are then planted: items are drawn at random, each with a
multiplicity m ~ Zipf(1.5) capped at ``max_mult``, and its m-1 extra copies go to random clients
(mostly other clients), until copies make up ``dup_rate`` of the training corpus.
The text differs slightly between Python versions, so the version and a SHA-256 of the corpus
are recorded in :attr:`FederatedCorpus.info`.
"""

from __future__ import annotations

import hashlib
import platform
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedrw.canon import canonicalize
from paperkit import check_int, check_real

__all__ = ["FederatedCorpus", "make_duplicated_corpus", "pydoc_chunks"]


def pydoc_chunks(chunk: int = 200, n_chunks: int | None = None) -> list[str]:
    """The pydoc topics text (sorted keys, joined by a blank line) cut into ``chunk``-character
    pieces; the first ``n_chunks`` (all when None). NaN policy: not applicable."""
    from pydoc_data.topics import topics

    chunk = check_int("chunk", "pydoc_chunks", chunk, low=8, high=100_000)
    text = "\n\n".join(topics[key] for key in sorted(topics))
    pieces = [text[i : i + chunk] for i in range(0, len(text) - chunk + 1, chunk)]
    if n_chunks is not None:
        n_chunks = check_int("n_chunks", "pydoc_chunks", n_chunks, low=1, high=len(pieces))
        pieces = pieces[:n_chunks]
    return pieces


@dataclass
class FederatedCorpus:
    """Clients' training samples (with their planted copies), the held-out test chunks, and
    what was planted (``info``: rates, counts, Python version, corpus SHA-256)."""

    clients: list[list[str]]
    test: list[str]
    info: dict[str, Any] = field(default_factory=dict)


def make_duplicated_corpus(
    clients: int = 4,
    dup_rate: float = 0.2,
    zipf: float = 1.5,
    max_mult: int = 50,
    chunk: int = 200,
    seed: int = 0,
    *,
    n_chunks: int = 600,
    test_frac: float = 0.1,
) -> FederatedCorpus:
    """The federated corpus with planted duplicates (see the module docstring).

    Copies make up ``dup_rate`` of the training samples: C = round(ρ·N/(1-ρ)) extra copies for
    N distinct training chunks. NaN policy: NaN rates are refused.

    >>> corpus = make_duplicated_corpus(clients=3, dup_rate=0.25, n_chunks=60, seed=0)
    >>> len(corpus.clients), corpus.info["copies"], corpus.info["train_unique"]
    (3, 18, 54)
    """
    owner = "make_duplicated_corpus"
    k = check_int("clients", owner, clients, low=2, high=64)
    rho = check_real("dup_rate", owner, dup_rate, low=0.0, high=0.9)
    a = check_real("zipf", owner, zipf, low=1.0, low_open=True, high=10.0)
    max_mult = check_int("max_mult", owner, max_mult, low=2, high=10_000)
    chunk = check_int("chunk", owner, chunk, low=8, high=10_000)
    seed = check_int("seed", owner, seed, low=0)
    n_chunks = check_int("n_chunks", owner, n_chunks, low=2 * k, high=100_000)
    test_frac = check_real("test_frac", owner, test_frac, low=0.0, high=0.5, high_open=True)
    pieces = pydoc_chunks(chunk, None)
    n_chunks = min(n_chunks, len(pieces))
    pieces = list({canonicalize(p): p for p in pieces[:n_chunks]}.values())  # distinct
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(pieces))
    n_test = int(round(test_frac * len(pieces)))
    test = [pieces[i] for i in order[:n_test]]
    train = [pieces[i] for i in order[n_test:]]
    owners = rng.integers(0, k, size=len(train))
    data: list[list[str]] = [[] for _ in range(k)]
    for text, c in zip(train, owners, strict=True):
        data[c].append(text)
    target = int(round(rho * len(train) / (1 - rho)))
    copies, cross, multiplicity = 0, 0, {}
    while copies < target:
        item = int(rng.integers(len(train)))
        extra = min(int(rng.zipf(a)), max_mult) - 1
        extra = min(extra, target - copies, max_mult - 1 - multiplicity.get(item, 0))
        if extra <= 0:
            continue
        multiplicity[item] = multiplicity.get(item, 0) + extra
        for c in rng.integers(0, k, size=extra):
            data[c].append(train[item])
            cross += int(c != owners[item])
        copies += extra
    data = [[d[i] for i in rng.permutation(len(d))] for d in data]
    text = "\n".join(pieces).encode()
    info = {
        "dup_rate": rho,
        "copies": copies,
        "cross_client_copies": cross,
        "duplicated_items": len(multiplicity),
        "train_unique": len(train),
        "train_total": len(train) + copies,
        "test": len(test),
        "python": platform.python_version(),
        "corpus_sha256": hashlib.sha256(text).hexdigest(),
        "chunks": len(pieces),
    }
    return FederatedCorpus(data, test, info)
