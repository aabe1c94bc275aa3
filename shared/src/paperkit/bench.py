"""One benchmark record, one timer, one memory probe and one scaling helper for every package.

A benchmark measures each implementation at each size into :class:`Measurement` rows (seconds,
interquartile spread, peak bytes, device) and reports ratios from the same run; complexity claims
are the slope of a log-log fit (``O(N)`` gives 1, ``O(N^2)`` gives 2)::

    rows = [measure("chunk", T, lambda: attn(x), device=device) for T in sizes]
    fit = scaling(rows)                     # {"chunk": {"slope": 1.02, ...}, ...}
    plot_scaling(rows, out / "scaling.png")

Nothing here needs torch, except what a CUDA device needs (synchronisation, its allocator's peak).
"""

from __future__ import annotations

import ctypes
import functools
import math
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from paperkit.checks import check_int, check_real
from paperkit.errors import param_error

__all__ = [
    "Measurement",
    "Timing",
    "crossover",
    "loglog_slope",
    "measure",
    "measure_interleaved",
    "peak_memory",
    "plot_scaling",
    "ratio_spread",
    "scaling",
    "time_callable",
    "time_interleaved",
]


@dataclass(frozen=True)
class Timing:
    """Median and interquartile range of the per-call wall time of one callable, in seconds, and
    the median CPU seconds of this process per call (``time.process_time``: every thread of the
    process counts, so a call that waits for cores shared with other jobs is not charged for the
    wait)."""

    median_s: float
    iqr_s: float
    calls: int
    device: str
    samples: tuple[float, ...] = ()
    cpu_median_s: float | None = None


@dataclass(frozen=True)
class Measurement:
    """One row of a benchmark: ``impl`` at ``size`` took ``seconds`` (median) per call.

    Attributes:
        impl: the implementation measured (``"reference"``, ``"chunk"``, ``"sdpa"``, ...).
        size: the size swept (sequence length, nodes, ...) or a label when there is no sweep.
        seconds: median seconds per call.
        spread: interquartile range of the per-call seconds.
        peak_bytes: peak bytes the call needed above what was in use before, or None.
        device: ``"cpu"`` or ``"cuda"``/``"cuda:N"``.
        case: which experiment of the bench the row belongs to (``"forward"``, ``"backward"``).
        repeats: how many timed calls the median is over.
        params: anything else that identifies the row (dtype, heads, ...).
        cpu_seconds: median CPU seconds of the process per call over the same calls (all
            threads), or None; on a loaded machine it moves less than ``seconds``.
    """

    impl: str
    size: float | int | str
    seconds: float
    spread: float
    peak_bytes: int | None
    device: str
    case: str = ""
    repeats: int = 1
    params: dict[str, Any] = field(default_factory=dict)
    cpu_seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def table_row(self, *, peak: bool = False, **columns: Any) -> dict[str, Any]:
        """The row's line in a printed table: impl, case, the given ``columns``, then ms, CPU ms,
        IQR ms (and peak MB with ``peak=True``).

        >>> m = Measurement("loop", 8, 0.002, 1e-4, 2**21, "cpu", "vs n")
        >>> row = m.table_row(peak=True, n=8)
        >>> list(row), row["ms"], row["peak MB"]
        (['impl', 'case', 'n', 'ms', 'cpu ms', 'IQR ms', 'peak MB'], 2.0, 2.0)
        """
        row = {"impl": self.impl, "case": self.case, **columns}
        row["ms"] = 1e3 * self.seconds
        row["cpu ms"] = 1e3 * (self.cpu_seconds or 0.0)
        row["IQR ms"] = 1e3 * self.spread
        if peak:
            row["peak MB"] = (self.peak_bytes or 0) / 2**20
        return row


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def time_callable(
    fn: Callable[[], Any],
    *,
    device: str = "cpu",
    warmup: int = 1,
    min_time: float = 0.2,
    min_repeats: int = 5,
    max_repeats: int = 1000,
) -> Timing:
    """Median and interquartile range of ``fn()``'s wall time over repeated calls, and its median
    CPU time (``Timing.cpu_median_s``).

    ``warmup`` calls run first (compilation, caches, autotuning); then ``fn`` is called until at
    least ``min_repeats`` calls and ``min_time`` seconds have passed (at most ``max_repeats``
    calls). On CUDA the device is synchronised around every call, so asynchronous launches count.
    Needs no torch on the CPU.
    """
    owner = "time_callable"
    check_int("warmup", owner, warmup, low=0)
    check_real("min_time", owner, min_time, low=0)
    check_int("min_repeats", owner, min_repeats, low=1)
    check_int("max_repeats", owner, max_repeats, low=min_repeats)
    for _ in range(warmup):
        fn()
    times: list[float] = []
    cpu: list[float] = []
    _sync(device)
    started = time.perf_counter()
    while len(times) < max_repeats and (
        len(times) < min_repeats or time.perf_counter() - started < min_time
    ):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return _timing(times, cpu, device, keep=False)


def _timing(times: list[float], cpu: list[float], device: str, keep: bool = True) -> Timing:
    q1, _, q3 = statistics.quantiles(times, n=4) if len(times) > 1 else (times[0],) * 3
    samples = tuple(times) if keep else ()
    return Timing(
        statistics.median(times), q3 - q1, len(times), device, samples, statistics.median(cpu)
    )


def time_interleaved(
    fns: dict[str, Callable[[], Any]],
    *,
    device: str = "cpu",
    warmup: int = 1,
    min_time: float = 0.2,
    min_repeats: int = 5,
    max_repeats: int = 1000,
) -> dict[str, Timing]:
    """Time several callables in alternating rounds, so that a load change hits them all alike.

    Each round calls every ``fns[name]`` once, in the given order in even rounds and reversed
    in odd ones, so that no callable always runs right after the same other one (a call pays
    for what the previous one left behind: freed pages, a cold cache); rounds repeat until
    ``min_repeats`` rounds and ``min_time`` seconds have passed (at most ``max_repeats``). Every
    :class:`Timing` keeps its per-round ``samples``, so ``a.samples[i] / b.samples[i]`` are
    same-round ratios: quote their median and spread (:func:`ratio_spread`) rather than the
    ratio of two medians measured minutes apart.

    >>> t = time_interleaved({"a": lambda: sum(range(100)), "b": lambda: None}, min_time=0)
    >>> sorted(t), t["a"].calls == t["b"].calls == len(t["a"].samples) >= 5
    (['a', 'b'], True)
    """
    owner = "time_interleaved"
    if not isinstance(fns, dict) or not fns or not all(callable(f) for f in fns.values()):
        raise param_error("fns", owner, "a non-empty dict of name -> callable", fns)
    check_int("warmup", owner, warmup, low=0)
    check_real("min_time", owner, min_time, low=0)
    check_int("min_repeats", owner, min_repeats, low=1)
    check_int("max_repeats", owner, max_repeats, low=min_repeats)
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    _sync(device)
    started, rounds = time.perf_counter(), 0
    while rounds < max_repeats and (
        rounds < min_repeats or time.perf_counter() - started < min_time
    ):
        for name, fn in list(fns.items())[:: -1 if rounds % 2 else 1]:
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            _sync(device)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
        rounds += 1
    return {name: _timing(ts, cpu[name], device) for name, ts in times.items()}


def _samples(x: Timing | Measurement) -> tuple[float, ...]:
    if isinstance(x, Measurement):
        return tuple(x.params.get("samples", ()))
    return x.samples


def ratio_spread(
    num: Timing | Measurement, den: Timing | Measurement
) -> tuple[float, float, float]:
    """Median, first and third quartile of the same-round ratios ``num / den`` of two timings
    from one :func:`time_interleaved` run, or of two rows of one :func:`measure_interleaved`
    call (their ``params["samples"]``).

    >>> a = Timing(2.0, 0.0, 3, "cpu", (2.0, 4.0, 6.0))
    >>> b = Timing(1.0, 0.0, 3, "cpu", (1.0, 2.0, 2.0))
    >>> ratio_spread(a, b)
    (2.0, 2.0, 3.0)
    """
    top, bottom = _samples(num), _samples(den)
    if not top or len(top) != len(bottom):
        raise param_error(
            "num", "ratio_spread", "a timing from the same time_interleaved run as den", num
        )
    ratios = [a / b for a, b in zip(top, bottom, strict=True)]
    q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
    return statistics.median(ratios), q1, q3


_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _rss_kib(key: str) -> int:
    match = re.search(rf"^{key}:\s+(\d+) kB", _STATUS.read_text(), re.MULTILINE)
    if match is None:  # pragma: no cover - a kernel without the field
        raise OSError(f"{key} missing from {_STATUS}")
    return int(match.group(1))


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


@functools.cache
def _libc() -> Any:
    """glibc (for ``mallopt`` and ``malloc_trim``); None elsewhere."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt  # noqa: B018 - only glibc has it
    except (OSError, AttributeError):
        return None
    return libc


def _probe_allocator(libc: Any) -> None:
    """Before a memory probe: every block of 128 KiB or more is mapped when allocated and
    unmapped when freed, and free heap memory goes back to the system, so the probe sees every
    large allocation of the call (glibc otherwise raises its mmap threshold each time a large
    block is freed, after which such blocks come from the heap and stay resident)."""
    libc.mallopt(_M_MMAP_THRESHOLD, 128 * 1024)
    libc.mallopt(_M_TRIM_THRESHOLD, 128 * 1024)
    libc.malloc_trim(0)


def _steady_allocator(libc: Any) -> None:
    """After a memory probe: the thresholds glibc's own adjustment reaches in a long-running
    process (mmap threshold 32 MiB, trim threshold twice that), so that the timings that follow
    reuse heap blocks as they would without the probe, instead of paying page faults for every
    large temporary."""
    libc.mallopt(_M_MMAP_THRESHOLD, 32 * 1024 * 1024)
    libc.mallopt(_M_TRIM_THRESHOLD, 64 * 1024 * 1024)


def peak_memory(fn: Callable[[], Any], *, device: str = "cpu") -> int | None:
    """Peak bytes ``fn()`` needed above what was in use before it ran.

    CUDA: the caching allocator's peak (``torch.cuda.max_memory_allocated``). CPU, on Linux: the
    growth of the process's peak resident set (``VmHWM`` after resetting it through
    ``/proc/self/clear_refs``), which counts every allocator (numpy, torch, native code) and no
    profiler. Free heap memory is returned to the system first (``malloc_trim``) and glibc's mmap
    threshold is held at 128 KiB during the call, so repeated calls give the same peak; small blocks
    that an allocator keeps cached between calls (under 128 KiB each) are not counted again. After
    the call the thresholds are set to those of a long-running process, so later timings are not
    slowed by page faults.
    Elsewhere: the peak of Python-traced allocations (``tracemalloc``, which numpy reports to).
    """
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        fn()
        torch.cuda.synchronize()
        return int(torch.cuda.max_memory_allocated() - before)
    if sys.platform.startswith("linux") and _CLEAR_REFS.exists():
        libc = _libc()
        if libc is not None:
            _probe_allocator(libc)
        try:
            _CLEAR_REFS.write_text("5")  # resets VmHWM to the current resident set
            before = _rss_kib("VmRSS")
            fn()
            return max(0, _rss_kib("VmHWM") - before) * 1024
        except OSError:  # pragma: no cover - a sandbox that forbids the reset
            pass
        finally:
            if libc is not None:
                _steady_allocator(libc)
    import tracemalloc

    tracemalloc.start()
    try:
        fn()
        return int(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()


def measure(
    impl: str,
    size: float | int | str,
    fn: Callable[[], Any],
    *,
    device: str = "cpu",
    case: str = "",
    memory: bool = True,
    params: dict[str, Any] | None = None,
    **timer: Any,
) -> Measurement:
    """Time ``fn`` (:func:`time_callable`, options in ``timer``) and, when ``memory``, its peak
    bytes (:func:`peak_memory`, measured after the timing so caches are warm); one row."""
    timing = time_callable(fn, device=device, **timer)
    peak = peak_memory(fn, device=device) if memory else None
    return Measurement(
        impl=impl,
        size=size,
        seconds=timing.median_s,
        spread=timing.iqr_s,
        peak_bytes=peak,
        device=device,
        case=case,
        repeats=timing.calls,
        params=dict(params or {}),
        cpu_seconds=timing.cpu_median_s,
    )


def measure_interleaved(
    fns: dict[str, Callable[[], Any]],
    size: float | int | str,
    *,
    device: str = "cpu",
    case: str = "",
    memory: bool = True,
    params: dict[str, Any] | None = None,
    **timer: Any,
) -> list[Measurement]:
    """One :class:`Measurement` per ``fns`` entry (``impl`` = its name), timed in alternating
    rounds (:func:`time_interleaved`, options in ``timer``); peak bytes of each afterwards. The
    rows' ``params["samples"]`` hold the per-round seconds, for same-round ratios."""
    timings = time_interleaved(fns, device=device, **timer)
    return [
        Measurement(
            impl=name,
            size=size,
            seconds=timing.median_s,
            spread=timing.iqr_s,
            peak_bytes=peak_memory(fns[name], device=device) if memory else None,
            device=device,
            case=case,
            repeats=timing.calls,
            params={**(params or {}), "samples": list(timing.samples)},
            cpu_seconds=timing.cpu_median_s,
        )
        for name, timing in timings.items()
    ]


def loglog_slope(sizes: Sequence[float], values: Sequence[float]) -> float:
    """Least-squares slope of ``log(values)`` against ``log(sizes)``: the empirical exponent.

    >>> round(loglog_slope([1, 2, 4, 8], [3, 12, 48, 192]), 6)
    2.0
    """
    x = np.asarray(sizes, dtype=float)
    y = np.asarray(values, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise param_error(
            "sizes",
            "loglog_slope",
            "a 1-D sequence of at least 2 sizes, as long as values",
            list(sizes),
        )
    if not (np.all(np.isfinite(x)) and np.all(x > 0)):
        raise param_error("sizes", "loglog_slope", "finite and positive", list(sizes))
    if not (np.all(np.isfinite(y)) and np.all(y > 0)):
        raise param_error("values", "loglog_slope", "finite and positive", list(values))
    slope, _ = np.polyfit(np.log(x), np.log(y), 1)
    return float(slope)


def crossover(
    sizes: Sequence[float], candidate: Sequence[float], baseline: Sequence[float]
) -> float | None:
    """The first size from which ``candidate`` stays below ``baseline`` (e.g. a time), or None.

    >>> crossover([1, 2, 4], [5, 3, 1], [2, 3, 4])
    4
    """
    if not len(sizes) == len(candidate) == len(baseline):
        raise param_error("candidate", "crossover", "as long as sizes and baseline", len(candidate))
    for i, size in enumerate(sizes):
        if all(c < b for c, b in zip(candidate[i:], baseline[i:], strict=True)):
            return size
    return None


def _series(rows: Sequence[Measurement], case: str | None) -> dict[str, tuple[list, list]]:
    series: dict[str, tuple[list, list]] = {}
    for row in rows:
        if case is not None and row.case != case:
            continue
        if isinstance(row.size, str) or not math.isfinite(row.seconds):
            continue
        xs, ys = series.setdefault(row.impl, ([], []))
        xs.append(row.size)
        ys.append(row.seconds)
    for xs, ys in series.values():
        order = np.argsort(xs)
        xs[:], ys[:] = [xs[i] for i in order], [ys[i] for i in order]
    return series


def scaling(
    rows: Sequence[Measurement], *, baseline: str | None = None, case: str | None = None
) -> dict[str, dict[str, Any]]:
    """Per implementation: the log-log slope of seconds against size, and (given a ``baseline``
    implementation) the speed-up over it at the largest common size and the crossover size.

    >>> rows = [Measurement("a", n, n**2, 0.0, None, "cpu") for n in (8, 16, 32)]
    >>> rows += [Measurement("b", n, 10 * n, 0.0, None, "cpu") for n in (8, 16, 32)]
    >>> fit = scaling(rows, baseline="a")
    >>> round(fit["a"]["slope"], 3), round(fit["b"]["slope"], 3), fit["b"]["crossover"]
    (2.0, 1.0, 16)
    """
    series = _series(rows, case)
    if baseline is not None and baseline not in series:
        raise param_error("baseline", "scaling", f"one of {sorted(series)}", baseline)
    fits: dict[str, dict[str, Any]] = {}
    for impl, (xs, ys) in series.items():
        fit: dict[str, Any] = {"sizes": list(xs), "seconds": list(ys)}
        fit["slope"] = loglog_slope(xs, ys) if len(xs) >= 2 else None
        if baseline is not None and impl != baseline:
            bx, by = series[baseline]
            common = [x for x in xs if x in bx]
            mine = [ys[xs.index(x)] for x in common]
            theirs = [by[bx.index(x)] for x in common]
            fit["speedup_at_largest"] = theirs[-1] / mine[-1] if common else None
            fit["crossover"] = crossover(common, mine, theirs) if common else None
        fits[impl] = fit
    return fits


def plot_scaling(
    rows: Sequence[Measurement],
    path: str | Path,
    *,
    case: str | None = None,
    title: str = "",
    xlabel: str = "size",
) -> Path:
    """Seconds against size on log-log axes, one line per implementation, slope in the legend."""
    from paperkit.report import figure, save_figure

    fig, ax = figure()
    for impl, (xs, ys) in _series(rows, case).items():
        slope = f" (slope {loglog_slope(xs, ys):.2f})" if len(xs) >= 2 else ""
        ax.loglog(xs, ys, marker="o", label=f"{impl}{slope}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("seconds per call (median)")
    if title:
        ax.set_title(title)
    ax.legend(fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    return save_figure(fig, path)
