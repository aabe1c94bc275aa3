import numpy as np

from mconformal import class_conditional_coverage, mean_set_size, singleton_rate
from paperkit.testing import assert_close, assert_param_error


def test_metrics_by_hand():
    sets = np.array(
        [[True, False, False], [True, True, False], [False, False, True], [False, True, False]]
    )
    y = np.array([0, 1, 0, 1])
    # class 0: rows 0 (covered) and 2 (not); class 1: rows 1 and 3 (both covered); class 2: none
    assert_close(class_conditional_coverage(sets, y), np.array([0.5, 1.0, np.nan]), rtol=0, atol=0)
    assert mean_set_size(sets) == 5 / 4
    assert singleton_rate(sets) == 3 / 4
    assert mean_set_size(list(sets)) == 5 / 4


def test_bad_inputs():
    assert_param_error(mean_set_size, np.ones((2, 2)), param="sets", exc=TypeError)
    assert_param_error(
        class_conditional_coverage, np.ones((2, 2), bool), np.array([0, 2]), param="y"
    )
