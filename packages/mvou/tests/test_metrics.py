"""Bures-W2, sample W2 and energy distance against closed forms."""

import torch

from conftest import F64, randn
from mvou import bures_w2, energy_distance, sample_w2


def test_bures_closed_forms():
    # commuting covariances: W2^2 = |m1 - m2|^2 + |S1^{1/2} - S2^{1/2}|_F^2
    S1, S2 = torch.diag(torch.tensor([1.0, 4.0])), torch.diag(torch.tensor([9.0, 1.0]))
    m1, m2 = torch.tensor([0.0, 0.0]), torch.tensor([3.0, 4.0])
    assert abs(bures_w2(m1, S1, m2, S2) - (25 + 4 + 1) ** 0.5) < 1e-12
    S = randn(3, 3, seed=1)
    S = S @ S.T + torch.eye(3, dtype=F64)
    assert bures_w2(torch.zeros(3), S, torch.zeros(3), S) < 1e-7


def test_sample_w2_of_a_translation_and_a_permutation():
    x = randn(50, 2, seed=0)
    assert sample_w2(x, x[torch.randperm(50)]) < 1e-12
    assert abs(sample_w2(x, x + torch.tensor([3.0, 4.0], dtype=F64)) - 5.0) < 1e-9


def test_energy_distance():
    x, y = randn(200, 2, seed=1), randn(200, 2, seed=2) + 2
    assert abs(energy_distance(x, x)) < 1e-12
    assert energy_distance(x, y) > 1.0
    assert abs(energy_distance(torch.zeros(1, 1), torch.full((1, 1), 3.0)) - 6.0) < 1e-12


def test_unequal_sizes_use_the_network_simplex():
    # one point against two: W2^2 = mean squared distance to both
    x, y = torch.zeros(1, 1), torch.tensor([[1.0], [3.0]])
    assert abs(sample_w2(x, y) - 5.0**0.5) < 1e-12
