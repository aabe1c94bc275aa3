"""Deterministic hashing of prefixes (splitmix64), so a stand-in verifier gives the same score to
the same prefix every time it is asked, whatever the order of the calls."""

from __future__ import annotations

import math

__all__ = ["gaussian", "mix", "uniform"]

_MASK = (1 << 64) - 1


def mix(x: int) -> int:
    """The splitmix64 finaliser of ``x`` (a 64-bit integer to 64-bit integer bijection).

    >>> mix(0), mix(1) != mix(2)
    (16294208416658607535, True)
    """
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def uniform(h: int, salt: int) -> float:
    """A number in [0, 1) determined by the hash ``h`` and ``salt``."""
    return (mix(h ^ salt) >> 11) * 2.0**-53


def gaussian(h: int, salt: int) -> float:
    """A standard normal number determined by ``h`` and ``salt`` (Box-Muller)."""
    u1 = 1.0 - uniform(h, salt)  # in (0, 1]
    u2 = uniform(h, salt + 1)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
