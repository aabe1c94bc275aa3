"""Coding rates: the closed form for an isotropic Gram matrix, R(0) = 0, the public code's eps
convention, subspace compression, principal angles."""

import math

import torch

from cbsa import coding_rate, principal_angles, subspace_compression
from conftest import rand
from paperkit.testing import assert_close


def test_closed_form_isotropic_gram():
    # X^T X = c I_p  =>  R = p/2 log(1 + p c / (n eps^2))
    n, p, c, eps = 12, 3, 2.5, 0.7
    Q = torch.linalg.qr(rand(n, p, seed=1))[0]  # orthonormal columns: Q^T Q = I
    X = math.sqrt(c) * Q
    assert_close(
        coding_rate(X, eps),
        torch.tensor(p / 2 * math.log(1 + p * c / (n * eps**2)), dtype=torch.float64),
        rtol=1e-12,
        atol=0,
    )
    assert float(coding_rate(torch.zeros(n, p, dtype=torch.float64))) == 0.0


def test_public_code_eps_is_our_eps_squared():
    X = rand(2, 3, 10, 4, seed=2)  # batched
    e = 0.01  # the public code's eps: scale p / (n e)
    gram = X.transpose(-1, -2) @ X
    theirs = 0.5 * torch.logdet(torch.eye(4, dtype=X.dtype) + 4 / (10 * e) * gram)
    assert_close(coding_rate(X, math.sqrt(e)), theirs, rtol=1e-12, atol=1e-12)


def test_subspace_compression_sums_the_projected_rates():
    Z = rand(30, 8, seed=3)
    Q = torch.linalg.qr(rand(8, 8, seed=4))[0]
    U = [Q[:, :3], Q[:, 3:5]]
    expected = coding_rate(Z @ U[0], 0.5) + coding_rate(Z @ U[1], 0.5)
    assert_close(subspace_compression(Z, U, 0.5), expected, rtol=1e-14, atol=0)


def test_principal_angles_of_a_rotation():
    theta = 0.3
    A = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], dtype=torch.float64)
    B = torch.tensor(
        [[1.0, 0.0], [0.0, math.cos(theta)], [0.0, math.sin(theta)]], dtype=torch.float64
    )
    assert_close(
        principal_angles(A, B), torch.tensor([0.0, theta], dtype=torch.float64), rtol=0, atol=1e-7
    )
