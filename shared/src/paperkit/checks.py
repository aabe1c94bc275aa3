"""Argument checks that raise the shared wording, so no package writes its own.

Every check takes the argument's name as the user passed it, the function or class that received
it, and the value, in that order (as :func:`paperkit.param_error` does), and returns the value
(converted where said). A bad value raises ``ValueError``, a wrong type ``TypeError``::

    chunk = check_int("chunk_size", "zeros_attention", chunk_size, low=1)
    scale = check_real("softmax_scale", "flash_bias_attention", scale, low=0, low_open=True)
    dims = {}
    check_tensor("q", "zeros_attention", q, shape=("B", "T", "H", "d"), dims=dims)
    check_tensor("k", "zeros_attention", k, shape=("B", "T", "H", "d"), dims=dims)  # same B, T, ...

Shapes are tuples of sizes: an ``int`` fixes the size, a ``str`` names it and ``None`` leaves it
free. A name seen twice (in one tensor, or across tensors checked with the same ``dims`` dict)
must have the same size everywhere; the message says where it was first fixed.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable, MutableMapping, Sequence
from typing import Any

from paperkit.errors import Described, param_error

__all__ = [
    "check_array",
    "check_bool",
    "check_callable",
    "check_choice",
    "check_int",
    "check_memory",
    "check_real",
    "check_tensor",
    "describe",
]

Shape = Sequence[int | str | None]


def describe(value: Any) -> Described:
    """A short description of a received value for an error message (shape and dtype of arrays)."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        kind = "a tensor" if hasattr(value, "detach") else "an array"
        return Described(f"{kind} of shape {tuple(value.shape)} and dtype {value.dtype}")
    if isinstance(value, (str, numbers.Number, type(None))):
        return Described(repr(value))
    return Described(f"a {type(value).__name__}")


def _interval(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is None and high is None:
        return ""
    left = "(" if low_open or low is None else "["
    right = ")" if high_open or high is None else "]"
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    return f" in {left}{lo}, {hi}{right}"


def _in_range(x: float, low, high, low_open: bool, high_open: bool) -> bool:
    if low is not None and (x < low or (low_open and x == low)):
        return False
    return not (high is not None and (x > high or (high_open and x == high)))


def check_int(
    name: str,
    owner: str,
    value: Any,
    *,
    low: int | None = None,
    high: int | None = None,
) -> int:
    """An integer (``bool`` refused; numpy integers accepted) in ``[low, high]``; returns ``int``.

    >>> check_int("steps", "train", 3, low=1)
    3
    >>> check_int("steps", "train", 0, low=1)
    Traceback (most recent call last):
    ...
    ValueError: The 'steps' parameter of train must be an integer in [1, inf). Got 0 instead.
    """
    expected = "an integer" + _interval(low, high, False, False)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise param_error(name, owner, expected, describe(value), cls=TypeError)
    value = int(value)
    if not _in_range(value, low, high, False, False):
        raise param_error(name, owner, expected, value)
    return value


def check_real(
    name: str,
    owner: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    finite: bool = True,
) -> float:
    """A real number (``bool`` refused) in the interval; NaN always refused, ``inf`` unless
    ``finite=False``. Returns ``float``.

    >>> check_real("lr", "Lion", 1e-3, low=0, low_open=True)
    0.001
    >>> check_real("lr", "f", float("nan"), low=0)
    Traceback (most recent call last):
    ...
    ValueError: The 'lr' parameter of f must be a finite real number in [0, inf). Got nan instead.
    """
    expected = ("a finite real number" if finite else "a real number (not NaN)") + _interval(
        low, high, low_open, high_open
    )
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise param_error(name, owner, expected, describe(value), cls=TypeError)
    value = float(value)
    if math.isnan(value) or (finite and math.isinf(value)):
        raise param_error(name, owner, expected, value)
    if not _in_range(value, low, high, low_open, high_open):
        raise param_error(name, owner, expected, value)
    return value


def check_bool(name: str, owner: str, value: Any) -> bool:
    """``True`` or ``False`` (numpy booleans accepted; ``0``/``1`` and strings refused)."""
    if type(value).__name__ in ("bool", "bool_"):
        return bool(value)
    raise param_error(name, owner, "True or False", describe(value), cls=TypeError)


def check_callable(name: str, owner: str, value: Any, *, optional: bool = False) -> Any:
    """``value`` if it is callable (or None when ``optional``), else the worded ``TypeError``.

    >>> check_callable("f", "bfgs", 3.0)
    Traceback (most recent call last):
    ...
    TypeError: The 'f' parameter of bfgs must be a callable. Got 3.0 instead.
    """
    if callable(value) or (optional and value is None):
        return value
    expected = "a callable or None" if optional else "a callable"
    raise param_error(name, owner, expected, describe(value), cls=TypeError)


def check_choice(name: str, owner: str, value: Any, choices: Iterable[Any]) -> Any:
    """``value`` if it is one of ``choices``, else the worded ``ValueError``.

    >>> check_choice("backend", "attention", "scan", ("reference", "scan"))
    'scan'
    """
    options = tuple(choices)
    try:
        ok = value in options
    except TypeError:  # unhashable or incomparable values
        ok = False
    if not ok:
        listed = ", ".join(repr(c) for c in options)
        raise param_error(name, owner, f"one of {listed}", describe(value))
    return value


def _check_shape(
    name: str,
    owner: str,
    value: Any,
    shape: Shape | None,
    ndim: int | Sequence[int] | None,
    dims: MutableMapping[str, tuple[int, str]] | None,
) -> None:
    got = tuple(int(s) for s in value.shape)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if len(got) not in allowed:
            ranks = " or ".join(f"{r}-D" for r in allowed)
            raise param_error(name, owner, f"{ranks}", describe(value))
    if shape is None:
        return
    spec = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
    if len(got) != len(shape):
        raise param_error(name, owner, f"of shape {spec}", describe(value))
    seen = {} if dims is None else dims
    for size, want in zip(got, shape, strict=True):
        if want is None:
            continue
        if isinstance(want, int):
            if size != want:
                raise param_error(
                    name, owner, f"of shape {spec} with {want} fixed", describe(value)
                )
            continue
        if want in seen and seen[want][0] != size:
            first, where = seen[want]
            raise param_error(
                name, owner, f"of shape {spec} with {want}={first} (as in {where})", describe(value)
            )
        seen.setdefault(want, (size, name))


def check_array(
    name: str,
    owner: str,
    value: Any,
    *,
    shape: Shape | None = None,
    ndim: int | Sequence[int] | None = None,
    dims: MutableMapping[str, tuple[int, str]] | None = None,
    kind: str | None = "real",
    finite: bool = True,
    nonempty: bool = True,
) -> Any:
    """A numpy array (array-likes converted with ``np.asarray``) of the given shape and kind.

    ``kind``: ``"real"`` (ints, floats; bool refused), ``"float"``, ``"int"``, ``"bool"`` or None.
    ``finite``: refuse NaN and inf. ``nonempty``: refuse size 0. Returns the array.
    """
    import numpy as np

    if isinstance(value, (str, bytes)) or value is None:
        raise param_error(name, owner, "an array", describe(value), cls=TypeError)
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise param_error(name, owner, "an array", describe(value), cls=TypeError) from exc
    if nonempty and array.size == 0:  # before the kind: numpy reads [] as float64
        raise param_error(name, owner, "non-empty", describe(array))
    kinds = {"real": "iuf", "float": "f", "int": "iu", "bool": "b"}
    if kind is not None and array.dtype.kind not in kinds[kind]:
        what = {
            "real": "an array of real numbers",
            "float": "an array of floating-point numbers",
            "int": "an array of integers",
            "bool": "a boolean array",
        }[kind]
        raise param_error(name, owner, what, describe(array), cls=TypeError)
    _check_shape(name, owner, array, shape, ndim, dims)
    if nonempty and array.size == 0:
        raise param_error(name, owner, "non-empty", describe(array))
    if finite and array.dtype.kind in "fc" and not _all_finite_numpy(array):
        raise param_error(name, owner, "finite (no NaN or inf)", describe(array))
    return array


def _all_finite_numpy(array: Any) -> bool:
    """No NaN or inf: a finite sum proves it in one read (any NaN or inf makes the sum NaN or
    inf); only a non-finite sum (such values, or an overflow) needs the element-wise test."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(array.sum()):
            return True
    return bool(np.isfinite(array).all())


def _all_finite_torch(value: Any) -> bool:
    """:func:`_all_finite_numpy` for a tensor: one reduction, element-wise only when it is not
    finite."""
    import torch

    return bool(torch.isfinite(value.sum())) or bool(torch.isfinite(value).all())


def check_tensor(
    name: str,
    owner: str,
    value: Any,
    *,
    shape: Shape | None = None,
    ndim: int | Sequence[int] | None = None,
    dims: MutableMapping[str, tuple[int, str]] | None = None,
    dtype: Any = "float",
    device: Any = None,
    finite: bool = True,
    nonempty: bool = True,
) -> Any:
    """A ``torch.Tensor`` of the given shape, dtype and device.

    ``dtype``: ``"float"`` (any floating dtype), ``"int"`` (any integer dtype), ``"bool"``, a
    torch dtype, a tuple of torch dtypes, or None for any. ``device``: the device the tensor must
    be on (e.g. another input's ``.device``), or None. ``finite``: refuse NaN and inf (a full pass
    over the tensor; say ``finite=False`` where NaN propagates by documented design).
    """
    import torch

    if not isinstance(value, torch.Tensor):
        raise param_error(name, owner, "a torch.Tensor", describe(value), cls=TypeError)
    if dtype is not None:
        if dtype == "float":
            ok, what = value.is_floating_point(), "a floating-point tensor"
        elif dtype == "int":
            ok = (
                not value.is_floating_point()
                and not value.is_complex()
                and value.dtype != torch.bool
            )
            what = "an integer tensor"
        elif dtype == "bool":
            ok, what = value.dtype == torch.bool, "a boolean tensor"
        else:
            allowed = dtype if isinstance(dtype, tuple) else (dtype,)
            ok = value.dtype in allowed
            what = "a tensor of dtype " + " or ".join(str(d) for d in allowed)
        if not ok:
            raise param_error(name, owner, what, describe(value), cls=TypeError)
    if device is not None and value.device != torch.device(device):
        raise param_error(
            name, owner, f"on device {device}", Described(f"a tensor on {value.device}")
        )
    _check_shape(name, owner, value, shape, ndim, dims)
    if nonempty and value.numel() == 0:
        raise param_error(name, owner, "non-empty", describe(value))
    floating = value.is_floating_point() or value.is_complex()
    if finite and floating and not _all_finite_torch(value.detach()):
        raise param_error(name, owner, "finite (no NaN or inf)", describe(value))
    return value


def _memory_limit() -> int:
    """Bytes one call may plan to use: ``PAPERKIT_MAX_BYTES``, else half the memory this process
    may have (the machine's, or its container's cgroup limit when lower)."""
    if "PAPERKIT_MAX_BYTES" in os.environ:
        return int(float(os.environ["PAPERKIT_MAX_BYTES"]))
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        total = 16 * 2**30
    for cgroup in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = open(cgroup).read().strip()  # noqa: SIM115 - a one-line pseudo-file
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total // 2


def check_memory(name: str, owner: str, value: Any, nbytes: float) -> Any:
    """Refuse ``value`` when the work it sizes would need ``nbytes`` beyond the limit
    (``PAPERKIT_MAX_BYTES``, default half the machine's memory), before any work starts.

    >>> check_memory("grid", "lower_bound", 10**9, 8 * 50 * 10**9)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The 'grid' parameter of lower_bound must be small enough to fit in memory ...
    """
    limit = _memory_limit()
    if nbytes > limit:
        raise param_error(
            name,
            owner,
            f"small enough to fit in memory (it needs {nbytes / 2**30:.3g} GiB, the limit is "
            f"{limit / 2**30:.3g} GiB; PAPERKIT_MAX_BYTES raises it)",
            value,
        )
    return value
