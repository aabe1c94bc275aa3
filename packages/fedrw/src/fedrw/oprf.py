"""The oblivious PRF F_k(x) = x(k·H(x)) on P-256 (DH-OPRF, Jarecki–Liu 2010; the PSI of the
paper's PPMPR protocol).

Holder j owns a key ``k_j`` (:class:`OPRFKey`); querier i learns ``F_{k_j}(x)`` for its own items
without revealing them and without learning ``k_j``:

    blind:    Q_x = x(r_x·H(x)),       r_x uniform in [1, n-1], fresh per item (querier)
    evaluate: E_x = x(k_j·lift(Q_x))                                   (holder)
    unblind:  F_{k_j}(x) = x(r_x^{-1}·lift(E_x))                       (querier)

``lift`` picks the even-y point; the ±sign it loses cancels (x(s·(-P)) = x(s·P)). Semi-honest
security rests on the one-more Diffie-Hellman assumption.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from cryptography.hazmat.primitives.asymmetric import ec

from fedrw.curve import ORDER, hash_to_curve, random_scalar, scalar_key, scalar_mult
from paperkit import describe, param_error

__all__ = ["BlindState", "OPRFKey", "blind", "unblind"]


def _check_points(name: str, owner: str, points: object) -> list[bytes]:
    if not isinstance(points, (list, tuple)):
        raise param_error(name, owner, "a list of bytes", describe(points), cls=TypeError)
    for p in points:
        if not isinstance(p, (bytes, bytearray)):
            raise param_error(name, owner, "a list of bytes", describe(p), cls=TypeError)
    return [bytes(p) for p in points]


class OPRFKey:
    """A holder's secret OPRF key k in [1, n-1], F_k(x) = x(k·H(x)) (32 bytes).

    Build with :meth:`generate`; ``evaluate`` answers one blinded query, ``prf`` computes F_k on
    the holder's own items. NaN policy: not applicable (bytes only).

    >>> import numpy as np
    >>> key = OPRFKey.generate(np.random.default_rng(0))
    >>> queries, state = blind([b"apple"], np.random.default_rng(1))
    >>> unblind([key.evaluate(q) for q in queries], state) == [key.prf(b"apple")]
    True
    """

    def __init__(self, scalar: int) -> None:
        if isinstance(scalar, bool) or not isinstance(scalar, int):
            raise param_error("scalar", "OPRFKey", "an integer", describe(scalar), cls=TypeError)
        if not 1 <= scalar < ORDER:
            raise param_error("scalar", "OPRFKey", "an integer in [1, n-1] (P-256)", scalar)
        self._key: ec.EllipticCurvePrivateKey = scalar_key(scalar)

    @classmethod
    def generate(cls, rng: np.random.Generator | None = None) -> OPRFKey:
        """A fresh key: from the OS CSPRNG when ``rng`` is None (every protocol run), from a
        numpy Generator only for reproducible tests."""
        return cls(random_scalar(rng))

    def evaluate(self, point_x: bytes) -> bytes:
        """E = x(k·lift(point_x)) for a blinded query's x-coordinate (32 bytes)."""
        if not isinstance(point_x, (bytes, bytearray)) or len(point_x) != 32:
            raise param_error(
                "point_x", "OPRFKey.evaluate", "32 bytes (an x-coordinate)", describe(point_x)
            )
        try:
            return scalar_mult(self._key, bytes(point_x))
        except ValueError as exc:
            raise param_error(
                "point_x", "OPRFKey.evaluate", "the x-coordinate of a P-256 point", "bytes off it"
            ) from exc

    def prf(self, item: bytes) -> bytes:
        """F_k(item) = x(k·H(item)), computed directly by the key's holder (32 bytes)."""
        return scalar_mult(self._key, hash_to_curve(item)[1:])


@dataclass
class BlindState:
    """The querier's secret blinding scalars r_x, in the order of its queries."""

    scalars: list[int] = field(repr=False)


def blind(
    items: Sequence[bytes], rng: np.random.Generator | None = None
) -> tuple[list[bytes], BlindState]:
    """Blinded queries Q_x = x(r_x·H(x)) (32 bytes each, in the order of ``items``) and the state
    to unblind them. ``rng`` None draws r_x from the OS CSPRNG; a numpy Generator is for tests.
    NaN policy: not applicable (bytes only)."""
    items = _check_points("items", "blind", items)
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise param_error("rng", "blind", "a numpy Generator or None", describe(rng), cls=TypeError)
    scalars = [random_scalar(rng) for _ in items]
    queries = [
        scalar_mult(scalar_key(r), hash_to_curve(x)[1:])
        for r, x in zip(scalars, items, strict=True)
    ]
    return queries, BlindState(scalars)


def unblind(responses: Sequence[bytes], state: BlindState) -> list[bytes]:
    """F_k(x) = x(r_x^{-1}·lift(E_x)) for each response, in the order of the queries.
    NaN policy: not applicable (bytes only)."""
    responses = _check_points("responses", "unblind", responses)
    if not isinstance(state, BlindState):
        raise param_error("state", "unblind", "a BlindState", describe(state), cls=TypeError)
    if len(responses) != len(state.scalars):
        raise param_error(
            "responses",
            "unblind",
            f"{len(state.scalars)} responses (one per query)",
            len(responses),
        )
    out = []
    for r, e in zip(state.scalars, responses, strict=True):
        if len(e) != 32:
            raise param_error("responses", "unblind", "32-byte x-coordinates", describe(e))
        try:
            out.append(scalar_mult(scalar_key(pow(r, -1, ORDER)), e))
        except ValueError as exc:
            raise param_error(
                "responses", "unblind", "x-coordinates of P-256 points", "bytes off the curve"
            ) from exc
    return out
