"""The wire format: every message between a client and the server is one ``bytes`` payload.

Layout: ``b"DPFL"`` | u32 header length | JSON header | ciphertext chunks | plaintext array.
The header holds the kind, the round id, the chunk lengths, the plaintext array's dtype and
length, and a few small integers (``meta``). Its :func:`manifest` is what the server logs
for every message, so the bytes on the wire are counted exactly and their content can be
audited (no dictionary, residual or other model tensor travels unless listed there).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from paperkit import Described, check_array, check_choice, check_int, describe, param_error

__all__ = ["KINDS", "Message", "decode", "encode", "manifest"]

_MAGIC = b"DPFL"
#: The message kinds of the protocol (see :mod:`dictpfl.server` and :mod:`dictpfl.client`).
KINDS = ("join", "sens", "sens_global", "round", "update", "global", "end")


@dataclass
class Message:
    """A decoded message."""

    kind: str
    round: int
    ct: list[bytes] = field(default_factory=list)
    plain: np.ndarray | None = None
    meta: dict[str, int] = field(default_factory=dict)


def encode(
    kind: str,
    round: int,
    ct: Sequence[bytes] = (),
    plain: np.ndarray | None = None,
    meta: dict[str, int] | None = None,
) -> bytes:
    """Serialise one message into a payload.

    ``kind`` one of :data:`KINDS`; ``round`` >= -1 (-1: before the rounds); ``ct`` a sequence of
    bytes; ``plain`` None or a 1-D real array (kept in its dtype; it may be empty; NaN or inf is
    refused); ``meta`` None or a dict of names to integers.

    >>> decode(encode("round", 3)).round
    3
    """
    owner = "encode"
    check_choice("kind", owner, kind, KINDS)
    round = check_int("round", owner, round, low=-1)
    if isinstance(ct, (bytes, str)) or not all(isinstance(c, (bytes, bytearray)) for c in ct):
        raise param_error(
            "ct", owner, "a sequence of bytes (ciphertexts)", describe(ct), cls=TypeError
        )
    if plain is not None:
        plain = check_array("plain", owner, plain, ndim=1, nonempty=False)
    if meta is not None and (
        not isinstance(meta, dict)
        or not all(isinstance(k, str) for k in meta)
        or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in meta.values())
    ):
        raise param_error(
            "meta", owner, "a dict of names to integers", describe(meta), cls=TypeError
        )
    body = np.ascontiguousarray(plain) if plain is not None else None
    header = {
        "kind": kind,
        "round": int(round),
        "ct": [len(c) for c in ct],
        "plain": None if body is None else [body.dtype.str, int(body.size)],
        "meta": {k: int(v) for k, v in (meta or {}).items()},
    }
    head = json.dumps(header).encode()
    parts = [_MAGIC, struct.pack("<I", len(head)), head, *ct]
    if body is not None:
        parts.append(body.tobytes())
    return b"".join(parts)


def _header(owner: str, payload: bytes) -> tuple[dict, int]:
    """The JSON header of a payload and where its body starts; errors name ``payload``."""
    expected = "a payload made by encode"
    if not isinstance(payload, (bytes, bytearray)):
        raise param_error("payload", owner, expected, describe(payload), cls=TypeError)
    try:
        if payload[:4] != _MAGIC:
            raise ValueError("bad magic bytes")
        (size,) = struct.unpack("<I", payload[4:8])
        header = json.loads(payload[8 : 8 + size])
        body = len(payload) - 8 - size
        if sum(header["ct"]) > body or header["kind"] not in KINDS:
            raise ValueError("inconsistent header")
    except (ValueError, KeyError, TypeError, struct.error) as exc:
        raise param_error(
            "payload", owner, expected, Described(f"{len(payload)} other bytes")
        ) from exc
    return header, 8 + size


def decode(payload: bytes) -> Message:
    """Parse a payload made by :func:`encode` (other bytes are refused)."""
    header, pos = _header("decode", payload)
    chunks = []
    for n in header["ct"]:
        chunks.append(bytes(payload[pos : pos + n]))
        pos += n
    plain = None
    if header["plain"] is not None:
        dtype, count = header["plain"]
        plain = np.frombuffer(payload, dtype=np.dtype(dtype), count=count, offset=pos).copy()
    return Message(header["kind"], header["round"], chunks, plain, header["meta"])


def manifest(payload: bytes) -> dict:
    """What a payload holds, by size: kind, round, ciphertext count and bytes, plaintext bytes,
    meta keys and the total length (other bytes than a payload are refused)."""
    header, pos = _header("manifest", payload)
    return {
        "kind": header["kind"],
        "round": header["round"],
        "n_ct": len(header["ct"]),
        "ct_bytes": int(sum(header["ct"])),
        "plain_bytes": len(payload) - pos - int(sum(header["ct"])),
        "meta": sorted(header["meta"]),
        "bytes": len(payload),
    }
