"""NIST P-256 through ``cryptography`` (OpenSSL): hash-to-curve and x-only scalar multiplication.

The group is P-256 of prime order ``n`` (:data:`ORDER`). Points travel as their 32-byte
x-coordinate; :func:`lift` re-attaches the prefix ``0x02`` (the point with even y). Lifting
``x(P)`` gives ``P`` or ``-P``, and ``x(s·(±P)) = x(s·P)``, so the sign ambiguity cancels in every
chain of scalar multiplications (blind, evaluate, unblind) of the OPRF.

Scalar multiplication is ECDH: ``x(s·P) = derive_private_key(s).exchange(ECDH(), P)``, which also
checks that ``P`` lies on the curve.
"""

from __future__ import annotations

import hashlib
import secrets

import numpy as np
from cryptography.hazmat.primitives.asymmetric import ec

from paperkit import describe, param_error

__all__ = ["CURVE", "ORDER", "hash_to_curve", "lift", "random_scalar", "scalar_mult", "scalar_key"]

CURVE = ec.SECP256R1()
#: Order n of the P-256 group (FIPS 186-4, D.1.2.3).
ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_H2C_TAG = b"fedrw/h2c"
_MAX_TRIES = 256  # each try succeeds with probability ~1/2: 2^-256 failure


def random_scalar(rng: np.random.Generator | None = None) -> int:
    """A uniform scalar in ``[1, n-1]``: from the OS CSPRNG (``secrets``) when ``rng`` is None,
    else from ``rng`` (reproducible, for tests only: a numpy Generator is not a CSPRNG)."""
    if rng is None:
        return 1 + secrets.randbelow(ORDER - 1)
    if not isinstance(rng, np.random.Generator):
        raise param_error(
            "rng", "random_scalar", "a numpy Generator or None", describe(rng), cls=TypeError
        )
    wide = int.from_bytes(rng.bytes(48), "big")  # 384 bits: bias below 2^-128
    return 1 + wide % (ORDER - 1)


def scalar_key(s: int) -> ec.EllipticCurvePrivateKey:
    """The private key holding scalar ``s`` in ``[1, n-1]`` (reuse it for many points)."""
    return ec.derive_private_key(s, CURVE)


def lift(point_x: bytes) -> ec.EllipticCurvePublicKey:
    """The curve point with x-coordinate ``point_x`` and even y (raises ValueError when the
    x-coordinate is not on the curve)."""
    return ec.EllipticCurvePublicKey.from_encoded_point(CURVE, b"\x02" + point_x)


def scalar_mult(key: ec.EllipticCurvePrivateKey, point_x: bytes) -> bytes:
    """``x(s·lift(point_x))`` for the scalar ``s`` held by ``key`` (ECDH), 32 bytes."""
    return key.exchange(ec.ECDH(), lift(point_x))


def hash_to_curve(item: bytes) -> bytes:
    """H(x): try-and-increment on SHA-256("fedrw/h2c" ‖ x ‖ ctr) as an x-coordinate.

    ``ctr`` is one byte, 0, 1, 2, ...; the first candidate that decodes as the compressed point
    ``0x02 ‖ candidate`` is returned as those 33 bytes. About half of all x-coordinates lie on
    P-256, so two tries are expected. (Try-and-increment is not constant time; it is applied to
    the holder's own items only, as in DH-based PSI.) NaN policy: not applicable (bytes only).

    >>> p = hash_to_curve(b"hello")
    >>> len(p), p[0], p == hash_to_curve(b"hello")
    (33, 2, True)
    """
    if not isinstance(item, (bytes, bytearray)):
        raise param_error("item", "hash_to_curve", "bytes", describe(item), cls=TypeError)
    for ctr in range(_MAX_TRIES):
        candidate = hashlib.sha256(_H2C_TAG + bytes(item) + bytes([ctr])).digest()
        try:
            lift(candidate)
        except ValueError:
            continue
        return b"\x02" + candidate
    raise RuntimeError("hash_to_curve: no point found in 256 tries")  # pragma: no cover
