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

__all__ = ["Message", "decode", "encode", "manifest"]

_MAGIC = b"DPFL"


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
    """Serialise one message into a payload."""
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


def _header(payload: bytes) -> tuple[dict, int]:
    if payload[:4] != _MAGIC:
        raise ValueError("not a dictpfl message: bad magic bytes")
    (size,) = struct.unpack("<I", payload[4:8])
    return json.loads(payload[8 : 8 + size]), 8 + size


def decode(payload: bytes) -> Message:
    """Parse a payload made by :func:`encode`."""
    header, pos = _header(payload)
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
    meta keys and the total length."""
    header, pos = _header(payload)
    return {
        "kind": header["kind"],
        "round": header["round"],
        "n_ct": len(header["ct"]),
        "ct_bytes": int(sum(header["ct"])),
        "plain_bytes": len(payload) - pos - int(sum(header["ct"])),
        "meta": sorted(header["meta"]),
        "bytes": len(payload),
    }
