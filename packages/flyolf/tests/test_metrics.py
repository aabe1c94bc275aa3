"""Metrics on hand examples (closed forms in the comments)."""

import numpy as np
import pytest

from flyolf import coding_level, lifetime_sparseness, noise_robustness, pattern_separation


def test_coding_level_counts_responding_neurons():
    counts = np.array([[0, 3, 0, 0], [1, 1, 1, 0]])
    assert coding_level(counts) == 4 / 8


def test_lifetime_sparseness_extremes():
    dense = np.ones((4, 3))  # every odor the same: S = 0
    assert lifetime_sparseness(dense) == 0.0
    single = np.zeros((4, 3))
    single[2] = 5.0  # each neuron answers one odor: S = 1
    assert lifetime_sparseness(single) == pytest.approx(1.0)
    # one neuron [2, 0, 0, 2]: (1 - 1^2 / 2) / (1 - 1/4) = 2/3
    assert lifetime_sparseness(np.array([[2.0], [0.0], [0.0], [2.0]])) == pytest.approx(2 / 3)


def test_pattern_separation_of_identical_orthogonal_and_disjoint_codes():
    code = np.array([[1, 0, 2, 0, 1, 3]] * 3)
    assert pattern_separation(code) == pytest.approx(1.0)
    hadamard = np.array([[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1]]) + 1  # shifted: same corr
    assert pattern_separation(hadamard) == pytest.approx(0.0, abs=1e-12)
    # two binary codes, k = 2 active of N = 8, disjoint: rho = -k / (N - k) = -1/3
    disjoint = np.zeros((2, 8))
    disjoint[0, :2] = 1
    disjoint[1, 2:4] = 1
    assert pattern_separation(disjoint) == pytest.approx(-1 / 3)


def test_noise_robustness():
    clean = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    assert noise_robustness(clean, 3 * clean) == pytest.approx(1.0)
    # rows swapped: rho = (-1.5) / (sqrt(2.75) * 1) for both rows (deviations by hand)
    assert noise_robustness(clean, clean[::-1]) == pytest.approx(-1.5 / np.sqrt(2.75))
