"""Canonical form of a sample: what counts as "the same sample" (exact duplicates, as the
paper's PPMPR protocol matches them).

``canonicalize(x)`` = UTF-8 bytes of the NFC-normalised string with every run of whitespace
collapsed to one space and the ends stripped. Two samples are duplicates when their canonical
bytes are equal; near-duplicates (edits, paraphrases) are out of scope.
"""

from __future__ import annotations

import unicodedata

from paperkit import describe, param_error

__all__ = ["canonicalize"]


def canonicalize(sample: str | bytes) -> bytes:
    """Canonical bytes of one sample: NFC, whitespace runs collapsed to one space, stripped.

    ``bytes`` input is decoded as UTF-8 first (invalid UTF-8 is refused). NaN policy: not
    applicable (text input only).

    >>> canonicalize("caf\\u0065\\u0301  au\\n lait ")
    b'caf\\xc3\\xa9 au lait'
    """
    if isinstance(sample, bytes):
        try:
            sample = sample.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise param_error("sample", "canonicalize", "valid UTF-8", describe(sample)) from exc
    if not isinstance(sample, str):
        raise param_error(
            "sample", "canonicalize", "a str or bytes", describe(sample), cls=TypeError
        )
    return " ".join(unicodedata.normalize("NFC", sample).split()).encode("utf-8")
