r"""Efficiency metrics of a packing (the paper's ABR and CR, named in its Figure 1).

- Attention Balance Ratio over R ranks with attention costs :math:`c_r`:
  :math:`\mathrm{ABR} = \sum_r (\max c - c_r)/(R\max c) = 1 - \bar c/\max c`.
- Communication Ratio: the share of short-sample tokens (:math:`\ell_s \le L_0`) that pay SP
  communication,
  :math:`\mathrm{CR} = \sum_{\ell_s\le L_0}\ell_s[sp(s)>1] / \sum_{\ell_s\le L_0}\ell_s`.
- Padding ratio: :math:`1 - \sum\ell / (\#\text{packs}\cdot L_{pack})`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hbp.data import sample_lengths
from hbp.packing import flat_packs
from paperkit import check_array, check_int, param_error

__all__ = ["attention_balance_ratio", "communication_ratio", "padding_ratio"]


def attention_balance_ratio(costs_per_rank: Sequence[float] | np.ndarray) -> float:
    """ABR = 1 - mean(c) / max(c): 0 when balanced, (R-1)/R when one rank does all the work.

    ``costs_per_rank``: a non-empty 1-D array of costs >= 0 (NaN and inf refused).

    >>> attention_balance_ratio([4, 2, 2, 0])
    0.5
    """
    owner = "attention_balance_ratio"
    c = check_array("costs_per_rank", owner, costs_per_rank, ndim=1).astype(np.float64)
    if np.any(c < 0):
        raise param_error("costs_per_rank", owner, "costs >= 0", float(c.min()))
    top = c.max()
    return 0.0 if top == 0 else float(1.0 - c.mean() / top)


def communication_ratio(
    lengths: Sequence[int] | np.ndarray, sp_of_sample: Sequence[int] | np.ndarray, L0: int
) -> float:
    """CR: the token share of samples no longer than ``L0`` trained with an SP degree > 1.

    ``lengths`` (positive integers) and ``sp_of_sample`` (integers >= 1) have one entry per
    sample; integer inputs, so NaN cannot occur (floats are refused).

    >>> communication_ratio([100, 2000, 50000, 120000], [1, 2, 1, 8], 80000) == 2000 / 52100
    True
    """
    owner = "communication_ratio"
    ell = sample_lengths("lengths", owner, lengths)
    sp = check_array("sp_of_sample", owner, sp_of_sample, shape=ell.shape, kind="int")
    if np.any(sp < 1):
        raise param_error("sp_of_sample", owner, "SP degrees >= 1", int(sp.min()))
    L0 = check_int("L0", owner, L0, low=1)
    short = ell <= L0
    total = ell[short].sum()
    return 0.0 if total == 0 else float(ell[short & (sp > 1)].sum() / total)


def padding_ratio(
    packs: Sequence[Sequence[int]], pack_len: int, lengths: Sequence[int] | np.ndarray | None = None
) -> float:
    """Share of the ``#packs * pack_len`` slots left empty.

    ``packs`` are lists of sample *lengths* (``lengths=None``), or lists of sample indices into
    ``lengths``; every pack holds at most ``pack_len`` tokens. Integer inputs only (no NaN).

    >>> round(padding_ratio([[6, 4], [5, 3]], 10), 12)
    0.1
    """
    owner = "padding_ratio"
    pack_len = check_int("pack_len", owner, pack_len, low=1)
    if lengths is None:
        flat_packs("packs", owner, packs, pack_len + 1, low=1, what="sample lengths")
        per_pack = [int(sum(p)) for p in packs]
    else:
        ell = sample_lengths("lengths", owner, lengths)
        flat_packs("packs", owner, packs, ell.size)
        per_pack = [int(ell[list(p)].sum()) for p in packs]
    if max(per_pack) > pack_len:
        raise param_error(
            "packs", owner, f"packs of at most 'pack_len' = {pack_len} tokens", max(per_pack)
        )
    return 1.0 - sum(per_pack) / (len(packs) * pack_len)
