from collections import Counter

from fedrw import canonicalize, make_duplicated_corpus, pydoc_chunks


def test_corpus_is_deterministic_and_duplicated_as_asked():
    """Check 11 (corpus): the same seed gives the same corpus; copies are rho of the training
    samples; test chunks never appear in training."""
    a = make_duplicated_corpus(dup_rate=0.3, seed=4)
    b = make_duplicated_corpus(dup_rate=0.3, seed=4)
    assert a.clients == b.clients and a.test == b.test
    assert a.clients != make_duplicated_corpus(dup_rate=0.3, seed=5).clients
    info = a.info
    assert info["train_unique"] == 540 and info["test"] == 60
    assert abs(info["copies"] / info["train_total"] - 0.3) < 0.002
    counts = Counter(canonicalize(t) for d in a.clients for t in d)
    assert sum(counts.values()) == info["train_total"] and len(counts) == 540
    assert max(counts.values()) <= 50
    assert not {canonicalize(t) for t in a.test} & set(counts)
    assert info["cross_client_copies"] > info["copies"] / 2  # mostly cross-client


def test_pydoc_chunks():
    chunks = pydoc_chunks(200, 600)
    assert len(chunks) == 600 and all(len(c) == 200 for c in chunks)
