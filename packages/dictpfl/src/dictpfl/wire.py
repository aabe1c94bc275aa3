"""What travels between the server and the clients, as Flower messages.

A CKKS ciphertext travels as one ``uint8`` :class:`flwr.app.Array` of its serialised bytes, so
an encrypted update is an ``ArrayRecord`` ``{"ct.0": ..., "ct.1": ...}`` and a plaintext part
(FedML-HE's, or an unencrypted baseline's) is one more float32 array ``"plain"``. Small
integers and flags travel in a ``ConfigRecord``, timings and accuracies in a ``MetricRecord``.

:func:`message_bytes` counts what Flower transmits for a message: the serialised (deflated)
bytes of the message object and of every object nested in it (records, arrays, array chunks),
which is what a SuperLink and its SuperNodes exchange. :func:`manifest` lists a message by
size, so the server's log shows exactly what crossed the wire.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from flwr.app import Array, ArrayRecord, Message
from flwr.supercore.inflatable.inflatable_object import get_all_nested_objects

__all__ = [
    "ciphertext_record",
    "ciphertexts",
    "manifest",
    "message_bytes",
    "plaintext",
    "serialise",
]


def ciphertext_record(
    chunks: Sequence[bytes], plain: np.ndarray | None = None, prefix: str = "ct"
) -> ArrayRecord:
    """An ``ArrayRecord`` holding ciphertexts ``prefix.0``, ``prefix.1``, ... and an optional
    plaintext float32 part ``plain``."""
    arrays = {
        f"{prefix}.{i}": Array(np.frombuffer(bytes(c), dtype=np.uint8))
        for i, c in enumerate(chunks)
    }
    if plain is not None:
        arrays["plain"] = Array(np.ascontiguousarray(plain, dtype=np.float32))
    return ArrayRecord(arrays)


def ciphertexts(record: ArrayRecord, prefix: str = "ct") -> list[bytes]:
    """The ciphertexts of a record made by :func:`ciphertext_record`, in order.

    Raises ValueError when the record's ciphertext entries are not ``uint8`` vectors numbered
    0, 1, ... without a gap (a malformed message).
    """
    names = [k for k in record if k.startswith(prefix + ".")]
    try:
        order = sorted(names, key=lambda k: int(k[len(prefix) + 1 :]))
    except ValueError as exc:
        raise ValueError(f"ciphertext entries are not numbered: {sorted(names)}") from exc
    if [k[len(prefix) + 1 :] for k in order] != [str(i) for i in range(len(order))]:
        raise ValueError(f"ciphertext entries are not numbered 0..n-1: {order}")
    out = []
    for k in order:
        arr = record[k].numpy()
        if arr.dtype != np.uint8 or arr.ndim != 1:
            raise ValueError(f"{k} is a {arr.dtype} array of shape {arr.shape}, not uint8 bytes")
        out.append(arr.tobytes())
    return out


def plaintext(record: ArrayRecord) -> np.ndarray | None:
    """The plaintext part of a record made by :func:`ciphertext_record` (None without one)."""
    if "plain" not in record:
        return None
    arr = record["plain"].numpy()
    if arr.dtype != np.float32 or arr.ndim != 1 or not np.all(np.isfinite(arr)):
        raise ValueError(f"the plaintext part is not a finite float32 vector ({arr.dtype})")
    return arr


def serialise(msg: Message) -> bytes:
    """``msg`` as Flower transmits it: its objects, serialised (deflated), concatenated."""
    return b"".join(obj.deflate() for obj in get_all_nested_objects(msg).values())


def message_bytes(msg: Message) -> int:
    """Bytes Flower transmits for ``msg``: its objects, serialised, summed. (The server measures
    its messages just before it pushes them, when Flower has not yet assigned their id.)"""
    return len(serialise(msg))


def manifest(msg: Message, direction: str, client: int, round: int) -> dict:
    """One log line for a message: direction, client, round, type, ciphertext count and bytes,
    plaintext bytes, the config and metric keys, and the bytes on the wire."""
    entry = {
        "dir": direction,
        "client": client,
        "round": round,
        "kind": msg.metadata.message_type,
        "n_ct": 0,
        "ct_bytes": 0,
        "plain_bytes": 0,
        "keys": [],
        "error": msg.has_error(),
        "bytes": message_bytes(msg),
    }
    if msg.has_error():
        return entry
    for name, record in msg.content.items():
        if isinstance(record, ArrayRecord):
            for k in record:
                size = int(record[k].numpy().nbytes)
                if k.startswith(("ct.", "agg.")):
                    entry["n_ct"] += 1
                    entry["ct_bytes"] += size
                else:
                    entry["plain_bytes"] += size
        else:
            entry["keys"] += [f"{name}.{k}" for k in record]
    entry["keys"].sort()
    return entry
