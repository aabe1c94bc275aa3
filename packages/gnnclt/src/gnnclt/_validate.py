"""Argument checks shared by the public functions (paperkit wording, naming the argument)."""

from __future__ import annotations

from typing import Any

from gnnclt.params import CSBMParams
from paperkit import param_error
from paperkit.checks import check_int, describe


def check_params(owner: str, params: Any) -> CSBMParams:
    """``params`` must be a :class:`CSBMParams` (validated on its construction)."""
    if not isinstance(params, CSBMParams):
        raise param_error("params", owner, "a CSBMParams", describe(params), cls=TypeError)
    return params


def check_seed(owner: str, seed: Any, name: str = "seed") -> int | None:
    """``None`` or a non-negative integer."""
    return None if seed is None else check_int(name, owner, seed, low=0)


def check_k(owner: str, k: Any) -> int:
    """The polynomial degree (number of layers), ``k >= 1``."""
    return check_int("k", owner, k, low=1, high=64)
