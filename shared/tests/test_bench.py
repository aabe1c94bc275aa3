import time

import numpy as np
import pytest

from paperkit.bench import (
    Measurement,
    crossover,
    loglog_slope,
    measure,
    measure_interleaved,
    peak_memory,
    plot_scaling,
    ratio_spread,
    scaling,
    time_callable,
    time_interleaved,
)


def test_time_callable_measures_a_known_sleep():
    timing = time_callable(lambda: time.sleep(0.01), min_time=0.1)
    assert 0.009 < timing.median_s < 0.05
    assert timing.calls >= 5 and timing.device == "cpu" and timing.iqr_s >= 0
    assert 0 <= timing.cpu_median_s < 0.005  # a sleeping process uses no CPU


def test_measure_records_cpu_seconds():
    row = measure("spin", 1, lambda: _spin(20_000), memory=False, min_time=0.0)
    assert row.cpu_seconds > 0 and row.to_dict()["cpu_seconds"] == row.cpu_seconds


def test_time_callable_runs_the_warmup_and_the_minimum_repeats():
    calls = []
    timing = time_callable(lambda: calls.append(1), warmup=3, min_time=0.0, min_repeats=7)
    assert len(calls) == 10 and timing.calls == 7


@pytest.mark.parametrize(
    "kwargs", [{"warmup": -1}, {"min_time": -1.0}, {"min_repeats": 0}, {"max_repeats": 2}]
)
def test_time_callable_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError, match="parameter of time_callable"):
        time_callable(lambda: None, **kwargs)


def _spin(n: int) -> int:
    return sum(i * i for i in range(n))


def test_time_interleaved_alternates_and_keeps_same_round_ratios():
    order = []
    timings = time_interleaved(
        {
            "slow": lambda: (order.append("slow"), _spin(40_000)),
            "fast": lambda: (order.append("fast"), _spin(10_000)),
        },
        warmup=1,
        min_time=0.0,
        min_repeats=6,
    )
    # one warm-up round, then six rounds in alternating order
    assert order == ["slow", "fast"] * 2 + ["fast", "slow", "slow", "fast"] * 2 + ["fast", "slow"]
    assert timings["slow"].calls == timings["fast"].calls == 6
    median, q1, q3 = ratio_spread(timings["slow"], timings["fast"])
    # 4x the work; wall time on a loaded machine stretches either call by any factor (a
    # preempted round), so it is bounded below only; CPU time is bounded on both sides
    assert q1 <= median <= q3 and median > 1.5
    cpu = timings["slow"].cpu_median_s / timings["fast"].cpu_median_s
    assert 2 < cpu < 8
    with pytest.raises(ValueError, match="same time_interleaved run"):
        ratio_spread(timings["slow"], time_callable(lambda: None, min_time=0.0))


def test_measure_interleaved_gives_one_row_per_callable_with_its_samples():
    rows = measure_interleaved(
        {"a": lambda: None, "b": lambda: None}, 8, case="x", memory=False, min_time=0.0
    )
    assert [(r.impl, r.size, r.case) for r in rows] == [("a", 8, "x"), ("b", 8, "x")]
    assert all(len(r.params["samples"]) == r.repeats >= 5 for r in rows)
    median, q1, q3 = ratio_spread(rows[0], rows[1])  # rows of one call carry their rounds
    assert q1 <= median <= q3
    with pytest.raises(ValueError, match="fns"):
        time_interleaved({})


def test_peak_memory_on_cpu_sees_a_numpy_temporary():
    n = 4_000_000  # 32 MB of float64, touched, then freed before the function returns

    def work():
        x = np.ones(n)
        return float(x.sum())

    peaks = [peak_memory(work) for _ in range(3)]
    assert all(8 * n * 0.9 <= peak < 8 * n * 3 for peak in peaks), peaks


def test_peak_memory_on_cpu_sees_a_torch_temporary():
    torch = pytest.importorskip("torch")
    n = 8_000_000  # 32 MB of float32

    def work():
        return float(torch.ones(n).sum())

    peaks = [peak_memory(work) for _ in range(3)]  # warm calls see the same peak
    assert all(4 * n * 0.9 <= peak < 4 * n * 3 for peak in peaks), peaks


def test_measure_gives_one_record():
    row = measure("sleep", 3, lambda: time.sleep(0.002), case="toy", min_time=0.02)
    assert isinstance(row, Measurement)
    assert row.impl == "sleep" and row.size == 3 and row.case == "toy" and row.device == "cpu"
    assert 0.0015 < row.seconds < 0.05 and row.peak_bytes is not None and row.repeats >= 5
    assert row.to_dict()["seconds"] == row.seconds


def test_loglog_slope_recovers_exponents():
    n = np.array([64, 128, 256, 512, 1024])
    assert loglog_slope(n, 3.0 * n) == pytest.approx(1.0)
    assert loglog_slope(n, 0.5 * n**2) == pytest.approx(2.0)
    assert 1.1 < loglog_slope(n, n * np.log(n)) < 1.25  # 1 + 1/ln n, averaged over the range


@pytest.mark.parametrize(
    ("sizes", "values"),
    [([1], [1]), ([1, 2], [1]), ([1, 2], [0, 1]), ([-1, 2], [1, 1]), ([1, 2], [1, np.nan])],
)
def test_loglog_slope_rejects_bad_input(sizes, values):
    with pytest.raises(ValueError, match="parameter of loglog_slope"):
        loglog_slope(sizes, values)


def test_crossover():
    sizes = [1, 2, 4, 8]
    assert crossover(sizes, [5, 3, 1, 1], [2, 2, 2, 2]) == 4
    assert crossover(sizes, [1, 3, 1, 1], [2, 2, 2, 2]) == 4  # must stay below from there on
    assert crossover(sizes, [3, 3, 3, 3], [2, 2, 2, 2]) is None
    with pytest.raises(ValueError, match="parameter of crossover"):
        crossover(sizes, [1], [1, 2, 3, 4])


def _rows():
    sizes = (64, 128, 256, 512)
    quad = [Measurement("quadratic", n, 1e-6 * n**2, 0.0, None, "cpu", "fwd") for n in sizes]
    lin = [Measurement("linear", n, 1e-4 * n, 0.0, None, "cpu", "fwd") for n in sizes]
    other = [Measurement("linear", n, 1.0, 0.0, None, "cpu", "bwd") for n in sizes]
    return quad + lin + other


def test_scaling_gives_slopes_speedup_and_crossover():
    fit = scaling(_rows(), baseline="quadratic", case="fwd")
    assert fit["quadratic"]["slope"] == pytest.approx(2.0)
    assert fit["linear"]["slope"] == pytest.approx(1.0)
    # 1e-6 n^2 vs 1e-4 n: equal at n = 100, linear faster from 128 on
    assert fit["linear"]["crossover"] == 128
    assert fit["linear"]["speedup_at_largest"] == pytest.approx(512 * 1e-6 / 1e-4)
    with pytest.raises(ValueError, match="'baseline' parameter of scaling"):
        scaling(_rows(), baseline="cubic")


def test_plot_scaling_writes_a_png(tmp_path):
    path = plot_scaling(_rows(), tmp_path / "s.png", case="fwd", title="toy")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
