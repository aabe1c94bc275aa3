import hashlib
from collections import Counter

import numpy as np
import pytest

from fedrw import canonicalize, secure_global_frequencies, ttp_global_frequencies
from fedrw.labels import ROW_BYTES


def _planted(k, seed):
    """K clients with within-client and cross-client duplicates (and a whitespace variant)."""
    rng = np.random.default_rng(seed)
    pool = [f"sample number {i}" for i in range(30)]
    data = [
        [pool[int(i)] for i in rng.integers(0, len(pool), size=int(rng.integers(3, 12)))]
        for _ in range(k)
    ]
    data[0] += ["shared by all"] * 3 + ["sample  number\n0"]  # canonicalises to "sample number 0"
    for d in data[1:]:
        d.append("shared by all")
    return data


def _plain(data):
    union = Counter(canonicalize(x) for d in data for x in d)
    return [{x: union[x] for x in Counter(canonicalize(y) for y in d)} for d in data]


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_frequencies_equal_plaintext_counter(k):
    """Check 4: F equals a plaintext Counter over the union, K in {2, 3, 4, 5}."""
    data = _planted(k, seed=k)
    res = secure_global_frequencies(data)
    assert res.freqs == _plain(data)
    for i, vectors in enumerate(res.counts):  # per-peer counts are the local Counters
        local = [Counter(canonicalize(x) for x in d) for d in data]
        for x, v in vectors.items():
            assert list(v) == [local[j][x] for j in range(k)], (i, x)


def test_transcript_hygiene():
    """Check 6: no payload holds any sample's canonical bytes or its plain SHA-256."""
    data = _planted(4, seed=0)
    res = secure_global_frequencies(data, keep_payloads=True)
    secrets = {canonicalize(x) for d in data for x in d}
    secrets |= {hashlib.sha256(s).digest() for s in secrets}
    secrets |= {s.hex().encode() for s in secrets}
    assert res.transcript and all(m.payload is not None for m in res.transcript)
    for m in res.transcript:
        assert m.nbytes == len(m.payload)
        for s in secrets:
            assert s not in m.payload


def test_parallel_and_sequential_agree():
    """Check 7: identical F; K-1 rounds (even K) or K (odd K) in parallel; same messages."""
    for k in (4, 5):
        data = _planted(k, seed=10 + k)
        par = secure_global_frequencies(data, parallel=True)
        seq = secure_global_frequencies(data, parallel=False)
        assert par.freqs == seq.freqs == ttp_global_frequencies(data).freqs
        assert par.rounds == (k - 1 if k % 2 == 0 else k) and seq.rounds == k * (k - 1) // 2
        assert par.bytes_total == seq.bytes_total
        assert par.critical_path_seconds > 0 and seq.critical_path_seconds > 0


def test_message_sizes_are_counted_exactly():
    """Each direction: a query of 32 bytes per distinct item, a reply with as many evaluations
    and a table of pad_to rows; K(K-1) of each."""
    data = [["a", "b", "b"], ["b", "c", "d"], ["e"]]
    res = secure_global_frequencies(data, pad_to=5, seed=1)
    distinct = [len(set(d)) for d in data]
    queries = [m for m in res.transcript if m.kind == "query"]
    replies = [m for m in res.transcript if m.kind == "reply"]
    assert len(queries) == len(replies) == 6
    for m in queries:
        assert m.nbytes == 32 * distinct[m.src]
    for m in replies:
        assert m.nbytes == 4 + 32 * distinct[m.dst] + 5 * ROW_BYTES
    assert res.bytes_total == sum(m.nbytes for m in res.transcript)


def test_bad_inputs_are_refused_before_any_process_starts():
    """Check 12: K < 2, an empty client, pad_to below a table."""
    with pytest.raises(ValueError, match="'client_datasets'"):
        secure_global_frequencies([["a"]])
    with pytest.raises(ValueError, match="'client_datasets'"):
        secure_global_frequencies([["a"], []])
    with pytest.raises(ValueError, match="'pad_to'"):
        secure_global_frequencies([["a", "b", "c"], ["a"]], pad_to=2)
