"""One wording for argument errors, shared by every package.

Bad input is answered with the same sentence shape everywhere, as scikit-learn does::

    The 'chunk_size' parameter of zero_sum_attention must be a power of 2. Got 48 instead.

so users (and tests, through :data:`PARAM_ERROR_PATTERN`) can rely on it. The checks that raise
it live in :mod:`paperkit.checks`.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["PARAM_ERROR_PATTERN", "Described", "param_error"]

#: Regular expression matching every message built by :func:`param_error`.
PARAM_ERROR_PATTERN = re.compile(
    r"^The '(?P<param>[^']+)' parameter of (?P<owner>\S+) must be (?P<expected>.+)\. "
    r"Got (?P<got>.+) instead\.$",
    re.DOTALL,
)


def param_error(
    param: str, owner: str, expected: str, got: Any, *, cls: type[Exception] = ValueError
) -> Exception:
    """Build (not raise) the exception for a bad argument.

    Args:
        param: the argument's name, e.g. ``"chunk_size"``.
        owner: the function or class that received it, e.g. ``"zero_sum_attention"``.
        expected: what was expected, completing "must be ...", e.g. ``"a power of 2"``.
        got: the value received; shown with ``repr`` (strings are shown as given when they
            already describe the value, e.g. ``"a tensor of shape (2, 3)"``, see below).
        cls: the exception class, ``ValueError`` (bad value) or ``TypeError`` (bad type).

    A ``got`` of type :class:`Described` is printed without quotes.

    >>> str(param_error("chunk_size", "zero_sum_attention", "a power of 2", 48))
    "The 'chunk_size' parameter of zero_sum_attention must be a power of 2. Got 48 instead."
    """
    shown = str(got) if isinstance(got, Described) else repr(got)
    return cls(f"The {param!r} parameter of {owner} must be {expected}. Got {shown} instead.")


class Described(str):
    """A description of a received value, printed verbatim by :func:`param_error`.

    >>> str(param_error("x", "f", "a 3-D tensor", Described("a tensor of shape (2, 3)")))
    "The 'x' parameter of f must be a 3-D tensor. Got a tensor of shape (2, 3) instead."
    """
