import itertools

import numpy as np
import pytest


def all_masks(n):
    """Every subset of {0..n-1} as a boolean mask (2^n, n)."""
    codes = np.arange(2**n)
    return ((codes[:, None] >> np.arange(n)) & 1).astype(bool)


def assert_submodular(values, n, monotone):
    """Brute force over all A subset B, e notin B: f(A+e) - f(A) >= f(B+e) - f(B) (diminishing
    returns); and f(A + e) >= f(A) when ``monotone``. ``values`` indexed by the bit code of S."""
    for B in range(2**n):
        A = B
        while True:  # every subset A of B
            for e in range(n):
                if B >> e & 1:
                    continue
                gain_a = values[A | 1 << e] - values[A]
                gain_b = values[B | 1 << e] - values[B]
                assert gain_a >= gain_b - 1e-9, (A, B, e)
                if monotone:
                    assert gain_a >= -1e-9
            if A == 0:
                break
            A = (A - 1) & B


@pytest.fixture
def random_graph():
    def make(n, p, seed):
        r = np.random.default_rng(seed).random((n, n)) < p
        W = np.triu(r, 1).astype(float)
        return W + W.T

    return make


__all__ = ["all_masks", "assert_submodular", "itertools"]
