import time

import numpy as np
import pytest
import torch

from paperkit.bench import crossover, loglog_slope, peak_memory, time_callable


def test_time_callable_measures_a_known_sleep():
    timing = time_callable(lambda: time.sleep(0.01), label="sleep", min_run_time=0.1)
    assert 0.009 < timing.median_s < 0.05
    assert timing.calls >= 5 and timing.label == "sleep" and timing.device == "cpu"
    assert timing.to_dict()["median_s"] == timing.median_s


def test_time_callable_runs_the_warmup():
    calls = []
    time_callable(lambda: calls.append(1), warmup=3, min_run_time=0.01)
    assert len(calls) >= 4


@pytest.mark.parametrize("kwargs", [{"warmup": -1}, {"min_run_time": 0}])
def test_time_callable_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError, match="parameter of time_callable"):
        time_callable(lambda: None, **kwargs)


def test_peak_memory_on_cpu_sees_a_temporary():
    n = 1_000_000  # 4 MB of float32, freed before the function returns

    def work():
        x = torch.ones(n)
        return float(x.sum())

    peak = peak_memory(work)
    assert 4 * n <= peak < 4 * n * 3


def test_loglog_slope_recovers_exponents():
    n = np.array([64, 128, 256, 512, 1024])
    assert loglog_slope(n, 3.0 * n) == pytest.approx(1.0)
    assert loglog_slope(n, 0.5 * n**2) == pytest.approx(2.0)
    assert 1.1 < loglog_slope(n, n * np.log(n)) < 1.25  # 1 + 1/ln n, averaged over the range


@pytest.mark.parametrize(
    ("sizes", "values"), [([1], [1]), ([1, 2], [1]), ([1, 2], [0, 1]), ([-1, 2], [1, 1])]
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
