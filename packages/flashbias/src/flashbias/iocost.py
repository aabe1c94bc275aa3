r"""The IO model of FlashBias (the paper's HBM-access argument).

A FlashAttention-style kernel with SRAM of ``S`` elements streams K/V tiles once per query block.
With the bias folded in as ``R`` extra head dimensions, the score matrix has rank ``d + R`` and the
kernel reads :math:`\Theta(NM(d+R)^2/S)` elements of Q, K, V and the factors. A dense bias adds
:math:`\Theta(NM)` reads (and :math:`O(NM)` memory); for small ``d`` this term dominates.
"""

from __future__ import annotations

from paperkit import check_bool, check_int

__all__ = ["hbm_accesses"]


def hbm_accesses(
    N: int, M: int, d: int, R: int, sram_bytes: int, dense_bias: bool, *, elem_bytes: int = 2
) -> float:
    r"""Elements read from HBM by a fused attention forward.

    .. math::
        \mathrm{IO} = N(d+R) + \frac{N M (d+R)^2}{S} \;[+\, NM \text{ if dense\_bias}]

    where :math:`S` = ``sram_bytes / elem_bytes`` elements. With ``dense_bias`` the bias is not
    factorised (``R`` should then be 0) and its :math:`N\times M` matrix is read once. Pure
    arithmetic on integers (no NaN can arise).

    >>> round(hbm_accesses(1024, 1024, 32, 2, 100 * 1024, dense_bias=False))  # N·34 + N²·34²/S
    58491
    """
    owner = "hbm_accesses"
    N, M, d, sram_bytes, elem_bytes = (
        check_int(name, owner, value, low=1)
        for name, value in (
            ("N", N),
            ("M", M),
            ("d", d),
            ("sram_bytes", sram_bytes),
            ("elem_bytes", elem_bytes),
        )
    )
    R = check_int("R", owner, R, low=0)
    dense_bias = check_bool("dense_bias", owner, dense_bias)
    sram = sram_bytes / elem_bytes
    width = d + R
    io = N * width + N * M * width**2 / sram
    if dense_bias:
        io += N * M
    return float(io)
