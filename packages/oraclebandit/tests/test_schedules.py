"""The grids of Section 3 of the paper, with their ceilings, recomputed independently."""

import math

import numpy as np
import pytest

from oraclebandit import aroq_grid, n_levels, sroq_grid


def _levels(x):
    return 1 if x <= 2 else math.ceil(math.log2(math.log2(x))) + 1


@pytest.mark.parametrize("T,m,d", [(2**10, 5, 20), (2**16, 5, 20), (1000, 3, 10), (12345, 7, 24)])
def test_aroq_grid_matches_the_formula(T, m, d):
    t_arm = math.ceil(T * m / d)
    E = _levels(t_arm)
    expected = [math.ceil(t_arm ** (1 - 2.0**-e)) for e in range(1, E + 1)]
    assert aroq_grid(T, m, d).tolist() == expected
    assert aroq_grid(T, m, d)[0] == math.ceil(math.sqrt(t_arm))


@pytest.mark.parametrize("T", [2, 3, 2**10, 2**15, 2**16, 50_000])
def test_sroq_grid_matches_the_formula(T):
    K = _levels(T)
    expected = [math.ceil(T ** (1 - 2.0**-k)) for k in range(1, K)] + [T]
    grid = sroq_grid(T)
    assert grid.tolist() == expected and len(grid) == n_levels(T) == K
    assert (np.diff(grid) > 0).all()


def test_levels_are_log_log():
    assert [n_levels(2**k) for k in (1, 2, 4, 8, 16)] == [1, 2, 3, 4, 5]
