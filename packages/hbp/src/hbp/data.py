r"""Synthetic sample lengths shaped like a long-context SFT blend (nothing is downloaded).

A mixture of lognormals: component c has weight :math:`w_c` and length
:math:`\ell = \lceil e^{\mu_c + \sigma_c z}\rceil`, :math:`z\sim\mathcal N(0,1)`, clipped to
``[1, max_len]``. The default mix mimics general SFT data (most samples ≤ 4K tokens) blended with
a LongAlign-like long tail up to 128K.

:func:`sample_lengths` is the one rule every function taking sample lengths applies: a non-empty
1-D array of positive integer token counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from paperkit import Described, check_array, check_int, check_memory, describe, param_error

__all__ = ["DEFAULT_MIX", "nonempty_list", "positive_ints", "sample_lengths", "synth_lengths"]

#: name -> (weight, mu, sigma) of ln(length).
DEFAULT_MIX: dict[str, tuple[float, float, float]] = {
    "general_sft": (0.90, float(np.log(600)), 0.9),  # chat / instruction data, median 600
    "long_doc": (0.08, float(np.log(12000)), 0.8),  # documents and multi-turn, median 12K
    "long_context": (0.02, float(np.log(60000)), 0.5),  # LongAlign-like, median 60K
}
#: Bytes per sample :func:`synth_lengths` holds at once (component, z, length; int64/float64).
_BYTES_PER_SAMPLE = 40


def nonempty_list(name: str, owner: str, value: Any, what: str) -> Sequence[Any]:
    """``value`` when it is a non-empty list or tuple (TypeError for another type, ValueError
    when empty); ``what`` completes "must be a non-empty list of ..." in the error."""
    expected = f"a non-empty list of {what}"
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise param_error(name, owner, expected, describe(value), cls=TypeError)
    if len(value) == 0:
        raise param_error(name, owner, expected, Described("an empty list"))
    return value


def positive_ints(
    name: str, owner: str, values: Any, what: str = "positive integers"
) -> np.ndarray:
    """``values`` as a non-empty 1-D int64 array of integers >= 1, else the worded error.

    Integer arrays, lists and CPU integer tensors are accepted; floating values are refused
    (TypeError), as is a value below 1 (ValueError, saying ``what`` was expected).
    """
    if isinstance(values, (list, tuple)) and not values:  # numpy reads [] as float64
        raise param_error(name, owner, f"a non-empty array of {what}", Described("an empty list"))
    array = check_array(name, owner, values, ndim=1, kind="int").astype(np.int64)
    if array.min() < 1:
        raise param_error(name, owner, what, int(array.min()))
    return array


def sample_lengths(name: str, owner: str, lengths: Any) -> np.ndarray:
    """:func:`positive_ints` for sample lengths: token counts, no empty sample."""
    return positive_ints(name, owner, lengths, "positive token counts (no empty sample)")


def synth_lengths(
    n: int,
    mix: Mapping[str, tuple[float, float, float]] | None = None,
    max_len: int = 131072,
    seed: int = 0,
) -> np.ndarray:
    """``n`` sample lengths (int64) from the lognormal mixture ``mix`` (:data:`DEFAULT_MIX`).

    ``mix`` maps a name to ``(weight >= 0, mu, sigma >= 0)``, all finite (NaN or inf refused).

    >>> synth_lengths(5, seed=0).tolist()
    [831, 1941, 1408, 319, 193]
    """
    owner = "synth_lengths"
    n = check_int("n", owner, n, low=1)
    check_memory("n", owner, n, _BYTES_PER_SAMPLE * n)
    max_len = check_int("max_len", owner, max_len, low=1)
    seed = check_int("seed", owner, seed, low=0)
    mix = DEFAULT_MIX if mix is None else mix
    if not isinstance(mix, Mapping) or not mix:
        raise param_error("mix", owner, "a non-empty mapping", Described(type(mix).__name__))
    try:
        params = np.asarray(list(mix.values()), dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise param_error("mix", owner, "name -> (weight, mu, sigma) tuples", mix) from exc
    if (
        params.ndim != 2
        or params.shape[1] != 3
        or not np.all(np.isfinite(params))
        or np.any(params[:, 0] < 0)
        or np.any(params[:, 2] < 0)
        or params[:, 0].sum() <= 0
    ):
        raise param_error(
            "mix", owner, "name -> finite (weight >= 0, mu, sigma >= 0) tuples", dict(mix)
        )
    rng = np.random.default_rng(seed)
    comp = rng.choice(len(params), size=n, p=params[:, 0] / params[:, 0].sum())
    z = rng.standard_normal(n)
    ell = np.ceil(np.exp(params[comp, 1] + params[comp, 2] * z))
    return np.clip(ell, 1, max_len).astype(np.int64)
