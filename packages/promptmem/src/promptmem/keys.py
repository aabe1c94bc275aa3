r"""Contextual keys: one exact, distinct, order-preserving integer per output slot (Part A, step 1).

An input sequence :math:`x \in V^N` gets the contextual key
:math:`\kappa(x) = \sum_{j<N} x_j\,|V|^{-(j+1)} \in [0, 1)`, distinct for distinct sequences.
Its exact code is the same digits written in binary, :math:`c = \lceil\log_2|V|\rceil` bits per
token (:func:`sequence_code`), so codes and :math:`\kappa` order sequences alike
(lexicographically). Output slot :math:`(i, j)` then gets the integer key
:math:`\mathrm{code}(x_i)\,2^{p} + j` with :math:`p = \lceil\log_2 N\rceil` position bits: a
:math:`q = Nc + p` bit key (:func:`key_bits`).

Real-valued tokens :math:`X \in \mathbb{R}^{N \times d_0}` get :math:`\kappa = \langle a,
\mathrm{vec}\,X\rangle` with a fixed generic :math:`a` (float64, drawn once from a seeded
generator); the code is the order-preserving 64-bit image of that float64 number
(:func:`real_code`). Two different inputs with the same :math:`\kappa` cannot be told apart by the
construction and are refused.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np

__all__ = ["contextual_key", "key_bits", "real_code", "sequence_code", "token_bits"]

#: Bits of the code of a real-valued input (a float64 number).
REAL_CODE_BITS = 64
_SIGN = 1 << 63
_MASK = (1 << 64) - 1


def token_bits(vocab: int) -> int:
    r""":math:`\lceil\log_2|V|\rceil` (at least 1): bits of one token.

    >>> token_bits(2), token_bits(8), token_bits(9)
    (1, 3, 4)
    """
    return max(1, (vocab - 1).bit_length())


def position_bits(N: int) -> int:
    r""":math:`\lceil\log_2 N\rceil`: bits of a position in ``range(N)`` (0 when N = 1)."""
    return (N - 1).bit_length()


def key_bits(N: int, vocab: int | None) -> int:
    r"""The key width :math:`q = N\lceil\log_2|V|\rceil + \lceil\log_2 N\rceil` (token inputs,
    ``vocab`` given) or :math:`64 + \lceil\log_2 N\rceil` (real inputs, ``vocab=None``).

    >>> key_bits(4, 8), key_bits(1, 16), key_bits(8, None)
    (14, 4, 67)
    """
    seq = REAL_CODE_BITS if vocab is None else N * token_bits(vocab)
    return seq + position_bits(N)


def contextual_key(x: list[int], vocab: int) -> Fraction:
    r"""The exact contextual key :math:`\kappa(x) = \sum_j x_j |V|^{-(j+1)}` of a token sequence.

    >>> contextual_key([1, 2], 4)
    Fraction(3, 8)
    """
    return sum((Fraction(t, vocab ** (j + 1)) for j, t in enumerate(x)), Fraction(0))


def sequence_code(x: list[int], vocab: int) -> int:
    r"""The integer :math:`\sum_j x_j 2^{c(N-1-j)}`: :math:`\kappa(x)`'s digits in binary,
    ordered as :math:`\kappa`.

    >>> sequence_code([1, 2], 4)  # 01 10
    6
    """
    c = token_bits(vocab)
    code = 0
    for t in x:
        code = (code << c) | int(t)
    return code


def real_code(x: np.ndarray, a: np.ndarray) -> int:
    r"""The order-preserving 64-bit code of :math:`\kappa = \langle a, \mathrm{vec}\,x\rangle`,
    computed in float64 with :func:`math.fsum` of the products (deterministic).

    >>> a = np.array([1.0, 0.5])
    >>> real_code(np.array([0.0, -2.0]), a) < real_code(np.array([0.0, 0.0]), a)
    True
    """
    kappa = math.fsum((a * x.reshape(-1).astype(np.float64)).tolist())
    kappa = 0.0 if kappa == 0 else kappa  # -0.0 and 0.0 are one key
    (bits,) = struct.unpack(">Q", struct.pack(">d", kappa))
    return (~bits & _MASK) if bits & _SIGN else bits | _SIGN
