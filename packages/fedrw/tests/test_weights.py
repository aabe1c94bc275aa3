from collections import Counter

import numpy as np
import pytest

from fedrw import (
    adaptive_alpha,
    canonicalize,
    client_training_data,
    make_duplicated_corpus,
    reweight,
    secure_global_frequencies,
)


@pytest.fixture(scope="module")
def corpus_and_counts():
    corpus = make_duplicated_corpus(clients=3, dup_rate=0.4, n_chunks=60, seed=3)
    return corpus, secure_global_frequencies(corpus.clients).counts


def test_alpha_zero_gives_ones():
    """Check 8: alpha = 0 gives weight 1 for every frequency."""
    assert np.array_equal(reweight(np.array([1, 2, 50]), alpha=0.0), np.ones(3))


def test_alpha_one_gives_every_item_total_weight_one(corpus_and_counts):
    """Check 8: with alpha = 1 the weights of all copies of an item, over all clients, sum to 1."""
    corpus, counts = corpus_and_counts
    total: Counter = Counter()
    for texts, freqs in client_training_data("fedrw", corpus, counts):
        for text, w in zip(texts, reweight(freqs, 1.0), strict=True):
            total[canonicalize(text)] += w
    assert corpus.info["copies"] > 0
    assert all(abs(v - 1.0) < 1e-12 for v in total.values())


def test_global_dedup_keeps_exactly_one_copy(corpus_and_counts):
    """Check 10: one copy of every distinct training item survives over all clients."""
    corpus, counts = corpus_and_counts
    kept = Counter(
        canonicalize(t)
        for texts, _ in client_training_data("global_dedup", corpus, counts)
        for t in texts
    )
    every = {canonicalize(t) for d in corpus.clients for t in d}
    assert set(kept) == every and set(kept.values()) == {1}


def test_local_dedup_keeps_one_copy_per_client(corpus_and_counts):
    corpus, _ = corpus_and_counts
    for texts, _ in client_training_data("local_dedup", corpus, None):
        keys = [canonicalize(t) for t in texts]
        assert len(keys) == len(set(keys))
    none = client_training_data("none", corpus, None)
    assert [len(t) for t, _ in none] == [len(d) for d in corpus.clients]


def test_adaptive_alpha_ramps_linearly():
    assert [adaptive_alpha(r, 0.8, 4) for r in (0, 2, 4, 9)] == [0.0, 0.4, 0.8, 0.8]
    assert adaptive_alpha(0, 0.8, 0) == 0.8


def test_negative_alpha_is_refused():
    """Check 12: alpha < 0 is a ValueError naming alpha."""
    with pytest.raises(ValueError, match="'alpha'"):
        reweight(np.array([1, 2]), alpha=-0.1)
