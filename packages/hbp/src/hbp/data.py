r"""Synthetic sample lengths shaped like a long-context SFT blend (nothing is downloaded).

A mixture of lognormals: component c has weight :math:`w_c` and length
:math:`\ell = \lceil e^{\mu_c + \sigma_c z}\rceil`, :math:`z\sim\mathcal N(0,1)`, clipped to
``[1, max_len]``. The default mix mimics general SFT data (most samples ≤ 4K tokens) blended with
a LongAlign-like long tail up to 128K.
"""

from __future__ import annotations

import numpy as np

from hbp._checks import positive_int
from paperkit import param_error

__all__ = ["DEFAULT_MIX", "synth_lengths"]

#: name -> (weight, mu, sigma) of ln(length).
DEFAULT_MIX: dict[str, tuple[float, float, float]] = {
    "general_sft": (0.90, float(np.log(600)), 0.9),  # chat / instruction data, median 600
    "long_doc": (0.08, float(np.log(12000)), 0.8),  # documents and multi-turn, median 12K
    "long_context": (0.02, float(np.log(60000)), 0.5),  # LongAlign-like, median 60K
}


def synth_lengths(
    n: int,
    mix: dict[str, tuple[float, float, float]] | None = None,
    max_len: int = 131072,
    seed: int = 0,
) -> np.ndarray:
    """``n`` sample lengths (int64) from the lognormal mixture ``mix`` (:data:`DEFAULT_MIX`)."""
    n = positive_int("n", "synth_lengths", n)
    max_len = positive_int("max_len", "synth_lengths", max_len)
    mix = DEFAULT_MIX if mix is None else mix
    if not mix:
        raise param_error("mix", "synth_lengths", "a non-empty mapping", mix)
    params = np.asarray(list(mix.values()), dtype=np.float64)
    if (
        params.ndim != 2
        or params.shape[1] != 3
        or np.any(params[:, 0] < 0)
        or params[:, 0].sum() <= 0
    ):
        raise param_error("mix", "synth_lengths", "name -> (weight >= 0, mu, sigma) tuples", mix)
    rng = np.random.default_rng(seed)
    comp = rng.choice(len(params), size=n, p=params[:, 0] / params[:, 0].sum())
    z = rng.standard_normal(n)
    ell = np.ceil(np.exp(params[comp, 1] + params[comp, 2] * z))
    return np.clip(ell, 1, max_len).astype(np.int64)
