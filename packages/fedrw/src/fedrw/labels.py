"""Label tables of the labelled PSI: the holder's counts, encrypted under its own OPRF values.

For each distinct item y of holder j with count c_j(y) (one row per item)::

    tag_y = SHA-256("tag" ‖ F_j(y))[:16]
    ct_y  = nonce ‖ AES-GCM(key = SHA-256("key" ‖ F_j(y)), nonce, plaintext = c_j(y) as uint32,
                           associated data = tag_y)

The rows are shuffled and padded with random dummy rows up to a public size ``pad_to``, so the
querier learns nothing about j's items beyond those it holds itself and the padded size. A
querier who unblinded F_j(x) finds tag_x and decrypts c_j(x); any other row stays opaque.
"""

from __future__ import annotations

import hashlib
import os
import random
import struct
from collections.abc import Mapping, Sequence

import numpy as np
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from fedrw.oprf import OPRFKey
from paperkit import check_int, describe, param_error

__all__ = [
    "ROW_BYTES",
    "build_label_table",
    "decode_table",
    "encode_table",
    "label_tag",
    "lookup_labels",
]

TAG_BYTES, NONCE_BYTES = 16, 12
CT_BYTES = NONCE_BYTES + 4 + 16  # nonce, uint32 count, GCM tag
#: Bytes of one table row on the wire.
ROW_BYTES = TAG_BYTES + CT_BYTES
_MAX_COUNT = 2**32 - 1


def label_tag(prf_value: bytes) -> bytes:
    """tag = SHA-256("tag" ‖ F)[:16]."""
    return hashlib.sha256(b"tag" + prf_value).digest()[:TAG_BYTES]


def _label_key(prf_value: bytes) -> bytes:
    return hashlib.sha256(b"key" + prf_value).digest()


def _shuffle(rows: list, rng: np.random.Generator | None) -> list:
    if rng is None:
        random.SystemRandom().shuffle(rows)
        return rows
    return [rows[i] for i in rng.permutation(len(rows))]


def build_label_table(
    key: OPRFKey,
    counts: Mapping[bytes, int],
    pad_to: int,
    rng: np.random.Generator | None = None,
    *,
    prf_values: Mapping[bytes, bytes] | None = None,
) -> list[tuple[bytes, bytes]]:
    """The holder's shuffled, padded table of ``(tag, ciphertext)`` rows, ``pad_to`` rows.

    ``counts`` maps each distinct item (canonical bytes) to its local count in [1, 2^32-1].
    ``prf_values`` may pass F_k(y) already computed (they are reused across peers). Nonces and
    dummy rows come from ``os.urandom``; ``rng`` (None: OS CSPRNG) only shuffles.
    NaN policy: not applicable (integer counts). ``pad_to`` smaller than the table is refused.

    >>> import numpy as np
    >>> key = OPRFKey.generate(np.random.default_rng(0))
    >>> table = build_label_table(key, {b"a": 3, b"b": 1}, pad_to=4)
    >>> len(table), lookup_labels([key.prf(b"a"), key.prf(b"zzz")], table)
    (4, [3, 0])
    """
    owner = "build_label_table"
    if not isinstance(key, OPRFKey):
        raise param_error("key", owner, "an OPRFKey", describe(key), cls=TypeError)
    if not isinstance(counts, Mapping):
        raise param_error(
            "counts", owner, "a dict of bytes -> int", describe(counts), cls=TypeError
        )
    for item, c in counts.items():
        if not isinstance(item, bytes):
            raise param_error(
                "counts", owner, "a dict with bytes keys", describe(item), cls=TypeError
            )
        check_int("counts", owner, c, low=1, high=_MAX_COUNT)
    pad_to = check_int("pad_to", owner, pad_to, low=max(1, len(counts)))
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise param_error("rng", owner, "a numpy Generator or None", describe(rng), cls=TypeError)
    if prf_values is not None and not isinstance(prf_values, Mapping):
        raise param_error(
            "prf_values", owner, "a dict of item -> F_k(item)", describe(prf_values), cls=TypeError
        )
    rows = []
    for item, c in counts.items():
        f = prf_values[item] if prf_values is not None else key.prf(item)
        tag, nonce = label_tag(f), os.urandom(NONCE_BYTES)
        ct = AESGCM(_label_key(f)).encrypt(nonce, struct.pack(">I", c), tag)
        rows.append((tag, nonce + ct))
    rows += [(os.urandom(TAG_BYTES), os.urandom(CT_BYTES)) for _ in range(pad_to - len(rows))]
    return _shuffle(rows, rng)


def lookup_labels(prf_values: Sequence[bytes], table: Sequence[tuple[bytes, bytes]]) -> list[int]:
    """c_j(x) for each unblinded F_j(x): the decrypted count where tag_x is in the table, else 0.

    A row whose ciphertext was altered, or encrypted under another key, fails AES-GCM
    authentication: ``cryptography.exceptions.InvalidTag`` is raised, never a wrong count.
    NaN policy: not applicable (bytes only).
    """
    if not isinstance(prf_values, (list, tuple)) or not all(
        isinstance(f, (bytes, bytearray)) for f in prf_values
    ):
        raise param_error(
            "prf_values", "lookup_labels", "a list of bytes", describe(prf_values), cls=TypeError
        )
    if not isinstance(table, (list, tuple)) or not all(
        isinstance(r, tuple) and len(r) == 2 for r in table
    ):
        raise param_error(
            "table",
            "lookup_labels",
            "a list of (tag, ciphertext) pairs",
            describe(table),
            cls=TypeError,
        )
    index = dict(table)
    out = []
    for f in prf_values:
        tag = label_tag(bytes(f))
        ct = index.get(tag)
        if ct is None:
            out.append(0)
            continue
        plain = AESGCM(_label_key(bytes(f))).decrypt(ct[:NONCE_BYTES], ct[NONCE_BYTES:], tag)
        out.append(struct.unpack(">I", plain)[0])
    return out


def encode_table(table: Sequence[tuple[bytes, bytes]]) -> bytes:
    """The table on the wire: the rows concatenated, :data:`ROW_BYTES` each."""
    return b"".join(tag + ct for tag, ct in table)


def decode_table(data: bytes) -> list[tuple[bytes, bytes]]:
    """Inverse of :func:`encode_table`."""
    if len(data) % ROW_BYTES:
        raise ValueError(f"a label table is a multiple of {ROW_BYTES} bytes, got {len(data)}")
    return [
        (data[i : i + TAG_BYTES], data[i + TAG_BYTES : i + ROW_BYTES])
        for i in range(0, len(data), ROW_BYTES)
    ]
