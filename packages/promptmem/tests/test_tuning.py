"""The search for the shortest memorising prompt (doubling, then bisection) and the fit."""

import math

import pytest

from promptmem import fit_scaling, min_prompt_length


def _stub(threshold, calls):
    def tuner(model, X, Y, m, seed=0):
        calls.append((m, seed))
        return None, 1.0 if m >= threshold else 0.5, 0

    return tuner


def test_search_evaluations_stub():
    # check 9: success iff m >= 5 -> 5, after 1, 2, 4, 8 (doubling) and 6, 5 (bisection)
    calls = []
    assert min_prompt_length(lambda: None, None, None, seeds=1, tuner=_stub(5, calls)) == 5
    assert [m for m, _ in calls] == [1, 2, 4, 8, 6, 5]


@pytest.mark.parametrize("threshold", [1, 2, 3, 7, 33, 64])
def test_search_finds_the_threshold(threshold):
    calls = []
    found = min_prompt_length(lambda: None, None, None, seeds=2, tuner=_stub(threshold, calls))
    assert found == threshold
    assert len({m for m, _ in calls}) == len([m for m, s in calls if s == 0])  # each m once


def test_search_resolution_and_failure():
    calls = []
    # rho = 0.25: stop when hi - lo <= max(1, hi / 4); threshold 40: doubling to 64, then
    # bisection 48 (hi), 40 (hi): 40 - 32 = 8 <= 10
    got = min_prompt_length(lambda: None, None, None, 64, 1, 0.25, _stub(40, calls))
    assert got == 40 and [m for m, _ in calls] == [1, 2, 4, 8, 16, 32, 64, 48, 40]
    assert min_prompt_length(lambda: None, None, None, 16, 1, tuner=_stub(17, [])) is None
    # m_max not a power of 2 is still tried last
    calls = []
    assert min_prompt_length(lambda: None, None, None, 12, 1, tuner=_stub(11, calls)) == 11
    assert 12 in [m for m, _ in calls]


def test_seeds_any_success():
    def tuner(model, X, Y, m, seed=0):
        return None, 1.0 if (m >= 3 and seed == 1) else 0.0, 0

    assert min_prompt_length(lambda: None, None, None, seeds=2, tuner=tuner) == 3
    assert min_prompt_length(lambda: None, None, None, seeds=1, tuner=tuner) is None


def test_fit_scaling_recovers_slopes():
    # check 8: m = 3 sqrt(nN) -> slope 1/2 (intercept log 3); m = nN / 2 -> slope 1
    ns, Ns = [4, 8, 16, 32, 64], [1, 2, 4, 1, 2]
    fit = fit_scaling(ns, Ns, [3 * math.sqrt(n * N) for n, N in zip(ns, Ns, strict=True)])
    assert fit["slope"] == pytest.approx(0.5, abs=1e-12)
    assert fit["intercept"] == pytest.approx(math.log(3), abs=1e-12)
    assert fit["r2"] == pytest.approx(1.0) and fit["ci_low"] == pytest.approx(0.5, abs=1e-9)
    fit = fit_scaling(ns, Ns, [n * N / 2 for n, N in zip(ns, Ns, strict=True)])
    assert fit["slope"] == pytest.approx(1.0, abs=1e-12)


def test_fit_scaling_interval_covers_noisy_slope():
    # the 95% interval is a Student t interval on k - 2 degrees of freedom
    ns = [2, 4, 8, 16, 32, 64]
    noise = [1.1, 0.9, 1.05, 0.95, 1.1, 0.92]
    fit = fit_scaling(ns, [1] * 6, [n**0.7 * e for n, e in zip(ns, noise, strict=True)])
    assert fit["ci_low"] < 0.7 < fit["ci_high"] and fit["ci_high"] - fit["ci_low"] < 0.3
    two = fit_scaling([2, 4], [1, 1], [1, 2])
    assert two["slope"] == pytest.approx(1.0) and math.isnan(two["ci_low"])
    with pytest.raises(ValueError, match="'ns'"):
        fit_scaling([4, 4], [1, 1], [1, 2])
