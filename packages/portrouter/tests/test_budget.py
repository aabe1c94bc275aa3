import numpy as np
import pytest

from paperkit.testing import assert_param_error
from portrouter import split_budget, total_budget
from portrouter.budget import STRATEGIES


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_splits_sum_to_the_total(strategy):
    perf, cost = np.array([0.4, 0.6, 0.8, 0.3]), np.array([1e-4, 5e-4, 3e-3, 5e-5])
    out = split_budget(12.0, perf, cost, strategy, rng=np.random.default_rng(0))
    for split in out if isinstance(out, list) else [out]:
        assert split.shape == (4,) and np.all(split > 0)
        assert split.sum() == pytest.approx(12.0)


def test_weighted_and_extreme_by_hand():
    perf, cost = np.array([0.4, 0.6, 0.8, 0.3]), np.array([1e-4, 5e-4, 3e-3, 5e-5])
    w = np.sqrt(perf / cost)
    np.testing.assert_allclose(split_budget(1.0, perf, cost), w / w.sum())
    # efficiency order (low to high): model 2 (0.8/3e-3), 1, 3, 0
    first, second = split_budget(1.0, perf, cost, "extreme")[:2]
    np.testing.assert_allclose(first, np.array([12.5 / 3, 12.5 / 3, 50, 12.5 / 3]) / (50 + 12.5))
    np.testing.assert_allclose(second, np.array([12.5, 50, 50, 12.5]) / 125)
    assert len(split_budget(1.0, perf, cost, "random")) == 100


def test_total_is_the_cheapest_model_serving_everything():
    g = np.array([[1.0, 3.0], [2.0, 1.0], [4.0, 1.0]])
    assert total_budget(g) == 5.0 and total_budget(g, 0.5) == 2.5
    assert_param_error(lambda: total_budget(g, 0.0), param="factor")


def test_bad_input():
    perf, cost = np.array([0.5, 0.5]), np.array([1.0, 2.0])
    assert_param_error(lambda: split_budget(-1.0, perf, cost), param="total")
    assert_param_error(lambda: split_budget(1.0, perf, cost, "greedy"), param="strategy")
    assert_param_error(lambda: split_budget(1.0, perf, np.array([1.0, 0.0])), param="cost")
