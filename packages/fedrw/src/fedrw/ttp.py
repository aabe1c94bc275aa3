"""The trusted-third-party timing baseline (EP-MPD-style deduplication needs such a party).

The clients share an HMAC key the third party does not know; each sends the tags
HMAC-SHA256(key, x) of its distinct samples with their counts, and the third party, which sees
every client's tags, answers each client with the per-client counts (c_0(x), ..., c_{K-1}(x)) of
its tags, from which the client reads F(x) and its deletion list. It is fast (no public-key
operation) but the third party learns which clients share which (tagged) samples and every count.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import struct
import time
from collections import Counter
from collections.abc import Sequence
from multiprocessing.connection import Connection

from fedrw.processes import QUIT, ClientGroup
from fedrw.protocol import FrequencyResult, Message, client_counts

__all__ = ["ttp_global_frequencies"]

TTP = -1  # the third party's index in the transcript
_TAG = 32


def _ttp_client(ctrl: Connection, counts: Counter, key: bytes) -> None:
    items = list(counts)
    while (cmd := ctrl.recv_bytes()) != QUIT:
        if cmd == b"T":
            tags = [hmac.new(key, x, hashlib.sha256).digest() for x in items]
            ctrl.send_bytes(
                b"".join(t + struct.pack(">I", counts[x]) for t, x in zip(tags, items, strict=True))
            )
            reply = ctrl.recv_bytes()
            k = len(reply) // (4 * len(items))
            vectors = struct.unpack(f">{k * len(items)}I", reply)
            learned = {x: tuple(vectors[n * k : (n + 1) * k]) for n, x in enumerate(items)}
            ctrl.send_bytes(pickle.dumps(learned))  # to the harness


def ttp_global_frequencies(client_datasets: Sequence[Sequence[str | bytes]]) -> FrequencyResult:
    """Global frequencies through a trusted third party that sees HMAC tags (the baseline).

    Same inputs and output as :func:`fedrw.secure_global_frequencies` (``rounds`` is 1: every
    client talks to the third party at once); the transcript's ``dst``/``src`` -1 is the third
    party. NaN policy: not applicable (text input).

    >>> ttp_global_frequencies([["a", "b"], ["b"]]).freqs[0] == {b"a": 1, b"b": 2}
    True
    """
    counts = client_counts(client_datasets, "ttp_global_frequencies")
    k, key = len(counts), os.urandom(32)
    with ClientGroup(_ttp_client, [(c, key) for c in counts]) as group:
        start = time.perf_counter()
        log, received = [], []
        for i in range(k):
            group.send(i, b"T")
        for i in range(k):
            data = group.recv(i)
            log.append(Message(i, TTP, len(data), time.perf_counter() - start, "tags"))
            rows = [data[n : n + _TAG + 4] for n in range(0, len(data), _TAG + 4)]
            received.append([(r[:_TAG], struct.unpack(">I", r[_TAG:])[0]) for r in rows])
        table: dict[bytes, list[int]] = {}
        for i, rows in enumerate(received):
            for tag, c in rows:
                table.setdefault(tag, [0] * k)[i] = c
        for i, rows in enumerate(received):
            reply = b"".join(struct.pack(f">{k}I", *table[tag]) for tag, _ in rows)
            log.append(Message(TTP, i, len(reply), time.perf_counter() - start, "counts"))
            group.send(i, reply)
        learned = [pickle.loads(group.recv(i)) for i in range(k)]
        seconds = time.perf_counter() - start
    freqs = [{x: sum(v) for x, v in vectors.items()} for vectors in learned]
    return FrequencyResult(freqs, learned, log, seconds, 1)
