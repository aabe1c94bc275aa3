r"""Efficiency metrics of a packing (card, "The method").

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

from hbp._checks import as_lengths, positive_int
from paperkit import Described, param_error

__all__ = ["attention_balance_ratio", "communication_ratio", "padding_ratio"]


def attention_balance_ratio(costs_per_rank: Sequence[float] | np.ndarray) -> float:
    """ABR = 1 - mean(c) / max(c): 0 when balanced, (R-1)/R when one rank does all the work."""
    c = np.asarray(costs_per_rank, dtype=np.float64)
    if c.ndim != 1 or c.size == 0 or np.any(c < 0) or not np.all(np.isfinite(c)):
        raise param_error(
            "costs_per_rank",
            "attention_balance_ratio",
            "a non-empty 1-D array of costs >= 0",
            Described(f"{c.tolist() if c.size < 10 else c.shape}"),
        )
    top = c.max()
    return 0.0 if top == 0 else float(1.0 - c.mean() / top)


def communication_ratio(
    lengths: Sequence[int] | np.ndarray, sp_of_sample: Sequence[int] | np.ndarray, L0: int
) -> float:
    """CR: the token share of samples no longer than ``L0`` trained with an SP degree > 1."""
    ell = as_lengths(lengths, "communication_ratio")
    sp = np.asarray(sp_of_sample)
    if sp.shape != ell.shape or np.any(sp < 1):
        raise param_error(
            "sp_of_sample",
            "communication_ratio",
            f"{ell.size} SP degrees >= 1",
            Described(f"shape {sp.shape}"),
        )
    L0 = positive_int("L0", "communication_ratio", L0)
    short = ell <= L0
    total = ell[short].sum()
    return 0.0 if total == 0 else float(ell[short & (sp > 1)].sum() / total)


def padding_ratio(
    packs: Sequence[Sequence[int]], pack_len: int, lengths: Sequence[int] | np.ndarray | None = None
) -> float:
    """Share of the ``#packs * pack_len`` slots left empty.

    ``packs`` are lists of sample *lengths*, or lists of sample indices into ``lengths``.
    """
    pack_len = positive_int("pack_len", "padding_ratio", pack_len)
    if len(packs) == 0:
        raise param_error("packs", "padding_ratio", "a non-empty list of packs", packs)
    if lengths is None:
        used = sum(int(sum(p)) for p in packs)
    else:
        ell = as_lengths(lengths, "padding_ratio")
        used = sum(int(ell[list(p)].sum()) for p in packs)
    return 1.0 - used / (len(packs) * pack_len)
