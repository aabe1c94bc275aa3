"""Benchmark helpers on ``torch.utils.benchmark``: timings, peak memory, complexity slopes.

Efficiency claims are reported as ratios measured in one run, and complexity claims as the slope of
a log-log fit (``O(N)`` gives 1, ``O(N^2)`` gives 2)::

    t = time_callable(lambda: attn(x), label="chunk", sub_label=f"T={T}")
    slope = loglog_slope(sizes, medians)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from paperkit.errors import param_error

__all__ = ["Timing", "crossover", "loglog_slope", "peak_memory", "time_callable"]


@dataclass(frozen=True)
class Timing:
    """Median and interquartile range of one benchmarked callable, in seconds."""

    label: str
    sub_label: str
    median_s: float
    iqr_s: float
    calls: int
    device: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def time_callable(
    fn: Callable[[], Any],
    *,
    label: str = "",
    sub_label: str = "",
    device: str = "cpu",
    warmup: int = 1,
    min_run_time: float = 0.2,
) -> Timing:
    """Time ``fn()`` with ``torch.utils.benchmark.Timer.blocked_autorange``.

    ``warmup`` calls run first (compilation, caches, autotuning); then blocks of calls run until
    ``min_run_time`` seconds have passed and the median per-call time is reported. On CUDA the
    timer synchronises the device around every block, so asynchronous launches are counted.
    """
    import torch
    from torch.utils import benchmark

    if warmup < 0:
        raise param_error("warmup", "time_callable", "a non-negative integer", warmup)
    if min_run_time <= 0:
        raise param_error("min_run_time", "time_callable", "positive", min_run_time)
    for _ in range(warmup):
        fn()
    _sync(device)
    timer = benchmark.Timer(
        stmt="fn()",
        globals={"fn": fn},
        label=label,
        sub_label=sub_label,
        num_threads=torch.get_num_threads(),
    )
    measurement = timer.blocked_autorange(min_run_time=min_run_time)
    return Timing(
        label=label,
        sub_label=sub_label,
        median_s=float(measurement.median),
        iqr_s=float(measurement.iqr),
        calls=len(measurement.times) * measurement.number_per_run,
        device=device,
    )


def peak_memory(fn: Callable[[], Any], *, device: str = "cpu") -> int:
    """Peak bytes allocated by torch while ``fn()`` runs, above what was allocated before.

    CUDA: from the caching allocator's peak statistics. CPU: from the profiler's record of every
    allocation and free (``profile_memory=True``), replayed in time order.
    """
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        fn()
        torch.cuda.synchronize()
        return int(torch.cuda.max_memory_allocated() - before)
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    # Every allocation (+bytes) and free (-bytes) is a "[memory]" record of the raw trace.
    records = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    records.sort(key=lambda e: e.start_ns())
    live = peak = 0
    for record in records:
        live += record.nbytes()
        peak = max(peak, live)
    return int(peak)


def loglog_slope(sizes: Sequence[float], values: Sequence[float]) -> float:
    """Least-squares slope of ``log(values)`` against ``log(sizes)``: the empirical exponent."""
    x = np.asarray(sizes, dtype=float)
    y = np.asarray(values, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise param_error(
            "sizes",
            "loglog_slope",
            "a 1-D sequence of at least 2 sizes, as long as values",
            list(sizes),
        )
    if np.any(x <= 0) or np.any(y <= 0):
        raise param_error("values", "loglog_slope", "positive", list(values))
    slope, _ = np.polyfit(np.log(x), np.log(y), 1)
    return float(slope)


def crossover(
    sizes: Sequence[float], candidate: Sequence[float], baseline: Sequence[float]
) -> float | None:
    """The first size from which ``candidate`` stays below ``baseline`` (e.g. a time), or None."""
    if not len(sizes) == len(candidate) == len(baseline):
        raise param_error("candidate", "crossover", "as long as sizes and baseline", len(candidate))
    for i, size in enumerate(sizes):
        if all(c < b for c, b in zip(candidate[i:], baseline[i:], strict=True)):
            return size
    return None
