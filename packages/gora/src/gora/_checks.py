"""Argument checks shared by this package's modules (worded by :func:`paperkit.param_error`)."""

from __future__ import annotations

from typing import Any

from paperkit import param_error

__all__ = ["non_negative_int", "positive_int"]


def positive_int(name: str, owner: str, value: Any) -> int:
    """``value`` as an ``int`` when it is a positive integer, else the worded ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise param_error(name, owner, "a positive integer", value)
    return int(value)


def non_negative_int(name: str, owner: str, value: Any) -> int:
    """``value`` as an ``int`` when it is an integer >= 0, else the worded ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise param_error(name, owner, "a non-negative integer", value)
    return int(value)
