"""The shared bad-input suite: one valid call per public entry point, the bad calls derived.

A package lists its public entry points, each with one valid call, in ``tests/test_bad_inputs.py``::

    from paperkit.testing import BadInputs, Call, fresh

    SUITE = BadInputs(
        zeros,
        [
            Call(zeros.zeros_attention, q=q, k=k, v=v, chunk_size=16,
                 shapes={"q": "B T H d", "k": "B T H d", "v": "B T H e"},
                 bad={"chunk_size": [48]}),
            Call(zeros.ZeroSAttention, dim=16, num_heads=2,
                 call={"x": torch.randn(2, 8, 16)}, shapes={"x": "B T 16"}),
        ],
        exempt={"mqar": "a data generator whose checks are tested in test_data.py"},
    )
    test_bad_input = SUITE.test()
    test_every_public_name_is_covered = SUITE.coverage_test()

From each valid call the suite derives bad ones, argument by argument:

========================  ==============================================================
argument in the valid call  bad calls (``kind``)
========================  ==============================================================
floating tensor / array   NaN (``nan``) and inf (``inf``) at one element; size 0 along the
                          first axis (``empty``); one axis more and one less (``rank``);
                          a size that disagrees with another argument's (``shape``, from
                          ``shapes``); a string (``type``); another dtype (``dtype``)
integer / bool tensor     ``empty``, ``rank``, ``shape``, ``type``; a negative entry
                          (``negative``, integer tensors); a floating dtype (``dtype``)
Python float              NaN and inf (``nonfinite``); a string (``type``)
Python int                1.5 (``fraction``); a string (``type``)
Python bool               the string "yes" (``type``)
Python str                "no-such-option" (``choice``); the number 3 (``type``)
list of numbers           a NaN entry (``nan``); the empty list (``empty``)
any argument              each value of ``bad[name]`` (``bad``): out-of-range values
========================  ==============================================================

Every bad call must raise ``ValueError`` or ``TypeError`` whose message names the argument as the
user passed it (``'chunk_size'``), before any heavy work starts (a ``dtype`` that disagrees with
another input's may name either). Two kinds may instead succeed:
``dtype`` (a documented cast) and any kind listed in ``accepts[name]`` (NaN that propagates by
documented design, an empty input that gives an empty output, any rank, free-text strings).
A call that returns silently, raises from deep inside a library, or names another argument
fails. The coverage test fails for every callable in ``__all__`` that is neither called nor
exempted with a reason. ``shapes`` name each axis (``"B T H d"``): a letter shared by two
arguments (or twice in one) must agree, a number is a size fixed by the call.
"""

from __future__ import annotations

import copy
import inspect
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

__all__ = ["BadCase", "BadInputs", "Call", "fresh", "run_case"]

#: Kinds that may succeed without being listed in ``accepts``.
MAY_SUCCEED = frozenset({"dtype", "valid"})


@dataclass(frozen=True)
class fresh:  # noqa: N801 - reads as a function at the call site
    """An argument built anew for every call (a generator of parameters, a mutable object)."""

    factory: Callable[[], Any]


class Call:
    """One public entry point and one valid call of it.

    Args:
        fn: the function, or the class (its constructor is called with ``kwargs``).
        call: for a class, the arguments of ``method`` on a valid instance (None: only the
            constructor is checked).
        method: the method ``call`` goes to (``"__call__"``: the module's forward).
        prepare: for a class, run on the instance before ``method`` (e.g. ``fit`` before
            ``predict``).
        shapes: the axes of each array argument, e.g. ``{"q": "B T H d"}``.
        bad: more values per argument that must be refused (out of range, too large).
        accepts: per argument, the kinds the entry point accepts by documented design.
        name: the id used in test names (default: the function's name).
        arguments, kwargs: the valid call's arguments by name; pass them as the ``arguments``
            dict when one is called like an option of ``Call`` (``name``, ``method``, ...).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        call: dict[str, Any] | None = None,
        method: str = "__call__",
        prepare: Callable[[Any], Any] | None = None,
        shapes: Mapping[str, str] | None = None,
        bad: Mapping[str, Sequence[Any]] | None = None,
        accepts: Mapping[str, Iterable[str]] | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs = {**(arguments or {}), **kwargs}
        self.fn, self.kwargs, self.call, self.method = fn, kwargs, call, method
        self.prepare = prepare
        self.shapes = dict(shapes or {})
        self.bad = dict(bad or {})
        self.accepts = {k: set(v) for k, v in (accepts or {}).items()}
        self.name = name or getattr(fn, "__name__", repr(fn))
        known = set(kwargs) | set(call or {})
        for table, what in ((self.shapes, "shapes"), (self.bad, "bad"), (self.accepts, "accepts")):
            unknown = set(table) - known
            if unknown:
                raise ValueError(
                    f"Call({self.name}): {what} names {sorted(unknown)}, not arguments"
                )


@dataclass(frozen=True)
class BadCase:
    """One derived call: ``where`` is ``"args"`` (a function's), ``"init"`` (a class's
    constructor), ``"call"`` (the method called on a valid instance) or ``"valid"``."""

    call: Call
    where: str
    arg: str
    kind: str
    value: Any
    refuse: bool

    @property
    def id(self) -> str:
        if self.kind == "valid":
            return f"{self.call.name}-valid"
        where = "" if self.where == "args" else f"{self.where}-"
        return f"{self.call.name}-{where}{self.arg}-{self.kind}"


def _materialise(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v.factory() if isinstance(v, fresh) else _copy(v) for k, v in kwargs.items()}


def _copy(value: Any) -> Any:
    if hasattr(value, "detach") and hasattr(value, "clone"):
        return value.detach().clone()
    try:
        return copy.deepcopy(value)
    except Exception:  # objects that cannot be copied are shared (modules of a model, ...)
        return value


def _is_tensor(v: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


def _is_array(v: Any) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(v, numpy.ndarray)


def _labels(call: Call) -> dict[str, list[tuple[str, int]]]:
    """Each axis label to the (argument, axis) places it appears, in declaration order."""
    places: dict[str, list[tuple[str, int]]] = {}
    for arg, spec in call.shapes.items():
        for axis, label in enumerate(spec.split()):
            places.setdefault(label, []).append((arg, axis))
    return places


def _grow(value: Any, axis: int) -> Any:
    """``value`` with one more entry along ``axis`` (a copy of its first slice)."""
    if _is_tensor(value):
        import torch

        return torch.cat([value, value.narrow(axis, 0, 1)], dim=axis)
    import numpy as np

    return np.concatenate([value, np.take(value, [0], axis=axis)], axis=axis)


def _array_cases(call: Call, arg: str, v: Any) -> list[tuple[str, Any, bool]]:
    cases: list[tuple[str, Any, bool]] = []
    torchy = _is_tensor(v)
    floating = v.is_floating_point() if torchy else v.dtype.kind in "fc"
    integer = (not floating) and (str(v.dtype) not in ("torch.bool", "bool"))
    size = v.numel() if torchy else v.size
    if v.ndim >= 1 and v.shape[0] > 0:
        if floating and size:
            first = (0,) * v.ndim
            last = tuple(s - 1 for s in v.shape)
            for kind, bad, where in (("nan", math.nan, first), ("inf", math.inf, last)):
                w = _copy(v) if torchy else v.copy()
                w[where] = bad  # indexing writes in place whatever the strides
                cases.append((kind, w, True))
        cases.append(("empty", v[:0], True))
        cases.append(("rank", v[0], True))
    cases.append(("rank", v[None], True))
    if integer and v.ndim >= 1 and v.shape[0] > 0:
        w = _copy(v) if torchy else v.copy()
        w[(0,) * v.ndim] = -1
        cases.append(("negative", w, True))
    if torchy:
        import torch

        other = (
            (torch.float64 if v.dtype != torch.float64 else torch.float32)
            if floating
            else torch.float32
        )
        cases.append(("dtype", v.to(other), False))
        if floating:
            cases.append(("dtype", v.to(torch.int64), False))
    else:
        cases.append(("dtype", v.astype("int64" if floating else "float64"), False))
    cases.append(("type", "not an array", True))
    places = _labels(call)
    for axis, label in enumerate(call.shapes.get(arg, "").split()):
        shared = places.get(label, [])
        first = shared[0] if shared else None
        grows = label.isdigit() or (len(shared) > 1 and first != (arg, axis))
        if grows and v.shape[axis] > 0:
            cases.append(("shape", _grow(v, axis), True))
    return cases


def _scalar_cases(v: Any) -> list[tuple[str, Any, bool]]:
    if isinstance(v, bool):
        return [("type", "yes", True)]
    if isinstance(v, int):
        return [("fraction", 1.5, True), ("type", "3", True)]
    if isinstance(v, float):
        return [("nonfinite", math.nan, True), ("nonfinite", math.inf, True), ("type", "x", True)]
    if isinstance(v, str):
        return [("choice", "no-such-option", True), ("type", 3, True)]
    if (
        isinstance(v, (list, tuple))
        and v
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
    ):
        return [("nan", type(v)([math.nan, *v[1:]]), True), ("empty", type(v)(), True)]
    return []


def _derive(call: Call, where: str, kwargs: Mapping[str, Any]) -> list[BadCase]:
    cases: list[BadCase] = []
    for arg, value in kwargs.items():
        sample = value.factory() if isinstance(value, fresh) else value
        derived = (
            _array_cases(call, arg, sample)
            if _is_tensor(sample) or _is_array(sample)
            else _scalar_cases(sample)
        )
        derived += [("bad", b, True) for b in call.bad.get(arg, ())]
        accepted = call.accepts.get(arg, set())
        seen: dict[str, int] = {}
        for kind, bad, refuse in derived:
            n = seen[kind] = seen.get(kind, 0) + 1
            label = kind if n == 1 else f"{kind}{n}"
            cases.append(BadCase(call, where, arg, label, bad, refuse and kind not in accepted))
    return cases


def run_case(case: BadCase) -> None:
    """Make the bad call and assert the outcome the suite expects (see the module docstring)."""
    call = case.call
    init = _materialise(call.kwargs)
    method_args = _materialise(call.call) if call.call is not None else None
    if case.where in ("init", "args"):
        init[case.arg] = case.value
    elif case.where == "call":
        method_args[case.arg] = case.value
    shown = f"{call.name}({case.arg}={_show(case.value)})"
    try:
        target = call.fn(**init)
        if method_args is not None:
            if call.prepare is not None:
                call.prepare(target)
            getattr(target, call.method)(**method_args)
    except (ValueError, TypeError) as exc:
        if case.kind == "valid":
            raise AssertionError(f"the valid call of {call.name} raised: {exc}") from exc
        # a dtype that disagrees with another input's may be blamed on either of them
        named = [case.arg]
        if case.kind.startswith("dtype"):
            named += [*call.kwargs, *(call.call or {})]
        if not any(f"'{n}'" in str(exc) for n in named):
            raise AssertionError(
                f"{shown} [{case.kind}] raised {type(exc).__name__} without naming "
                f"'{case.arg}': {exc}"
            ) from exc
        return
    except Exception as exc:
        if case.kind == "valid":
            raise
        raise AssertionError(
            f"{shown} [{case.kind}] raised {type(exc).__name__} from inside instead of a "
            f"ValueError/TypeError naming '{case.arg}': {exc}"
        ) from exc
    if case.refuse:
        raise AssertionError(f"{shown} [{case.kind}] returned silently instead of refusing")


def _show(value: Any) -> str:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"<{type(value).__name__} {tuple(value.shape)} {value.dtype}>"
    text = repr(value)
    return text if len(text) < 40 else text[:37] + "..."


class BadInputs:
    """The suite of one package: its module, its entry points, and the names it exempts."""

    def __init__(
        self,
        module: ModuleType,
        calls: Sequence[Call],
        *,
        exempt: Mapping[str, str] | None = None,
    ) -> None:
        self.module, self.calls, self.exempt = module, list(calls), dict(exempt or {})
        for name, reason in self.exempt.items():
            if not str(reason).strip():
                raise ValueError(f"exempt[{name!r}] needs a reason")

    def cases(self) -> list[BadCase]:
        """Every derived bad call, plus each entry point's valid call (kind ``valid``)."""
        out: list[BadCase] = []
        for call in self.calls:
            out.append(BadCase(call, "valid", "-", "valid", None, False))
            out += _derive(call, "init" if inspect.isclass(call.fn) else "args", call.kwargs)
            if call.call is not None:
                out += _derive(call, "call", call.call)
        ids = [c.id for c in out]
        dupes = {i for i in ids if ids.count(i) > 1}
        if dupes:
            raise ValueError(f"two entry points share a name; give Call(name=...): {sorted(dupes)}")
        return out

    def test(self) -> Callable[..., None]:
        """A pytest test, parametrised over :meth:`cases`."""
        cases = self.cases()

        @pytest.mark.timeout(60)
        @pytest.mark.parametrize("case", cases, ids=[c.id for c in cases])
        def test_bad_input(case: BadCase) -> None:
            run_case(case)

        return test_bad_input

    def uncovered(self) -> list[str]:
        """Callables of the module's ``__all__`` that no :class:`Call` covers and none exempts."""
        covered = {getattr(c.fn, "__name__", None) for c in self.calls}
        missing = []
        for name in getattr(self.module, "__all__", ()):
            obj = getattr(self.module, name)
            takes_input = inspect.isclass(obj) or (
                callable(obj) and len(inspect.signature(obj).parameters) > 0
            )
            if takes_input and name not in covered and name not in self.exempt:
                missing.append(name)
        return missing

    def coverage_test(self) -> Callable[[], None]:
        """A pytest test that fails for each public callable the suite does not cover."""

        def test_every_public_name_is_covered() -> None:
            missing = self.uncovered()
            assert not missing, (
                f"{self.module.__name__}: add a Call (or an exempt reason) for {missing}"
            )
            stale = sorted(set(self.exempt) - set(getattr(self.module, "__all__", ())))
            assert not stale, f"exempt names not in __all__: {stale}"

        return test_every_public_name_is_covered
