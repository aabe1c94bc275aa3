import numpy as np
import pytest
import scipy.linalg
import torch

from paperkit.testing import assert_close, assert_param_error
from subtrack import grassmann_step, principal_angles, projection_error, rotate_adam_moments


def _basis(d, r, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.linalg.qr(torch.randn(d, r, generator=g, dtype=torch.float64)).Q


def _randn(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_orthonormal_after_1000_steps():
    P = _basis(40, 6, 0)
    g = torch.Generator().manual_seed(1)
    for _ in range(1000):
        P, _ = grassmann_step(P, torch.randn(40, 30, generator=g, dtype=torch.float64), 0.05)
    assert torch.linalg.matrix_norm(P.T @ P - torch.eye(6, dtype=torch.float64)) < 1e-10


def test_matches_expm_geodesic():
    P, G, eta = _basis(20, 4, 2), _randn(20, 15, seed=3), 0.01
    A = P.T @ G
    D = 2 * (G - P @ A) @ A.T
    U, S, Vh = torch.linalg.svd(D)
    H = (S[0] * U[:, :1] @ Vh[:1]).numpy()
    Pn = P.numpy()
    expected = scipy.linalg.expm(eta * (H @ Pn.T - Pn @ H.T)) @ Pn
    P_new, theta = grassmann_step(P, G, eta)
    assert theta == pytest.approx(eta * float(S[0]))
    assert_close(P_new.numpy(), expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_small_step_descends(seed):
    P, G = _basis(30, 5, seed), _randn(30, 20, seed=seed + 10)
    P_new, theta = grassmann_step(P, G, 1e-4)
    assert theta > 0
    assert projection_error(P_new, G) < projection_error(P, G)


def test_fixed_point_when_gradient_in_span():
    P = _basis(25, 5, 4)
    G = P @ _randn(5, 12, seed=5)
    P_new, theta = grassmann_step(P, G, 10.0)
    assert theta < 1e-10
    assert_close(P_new.numpy(), P.numpy(), rtol=0, atol=1e-12)


def test_recovers_fixed_subspace():
    U0 = _basis(30, 4, 6)
    P = _basis(30, 4, 7)
    g = torch.Generator().manual_seed(8)
    for _ in range(300):
        B = torch.randn(4, 20, generator=g, dtype=torch.float64)
        G = U0 @ B + 1e-8 * torch.randn(30, 20, generator=g, dtype=torch.float64)
        P, _ = grassmann_step(P, G, 0.01, max_angle=0.5)
    assert principal_angles(P, U0).max() < 1e-3


def test_max_angle_clips():
    P, G = _basis(20, 3, 9), _randn(20, 10, seed=9)
    _, theta = grassmann_step(P, G, 1e6, max_angle=0.1)
    assert theta == 0.1


def test_rotate_identity_and_deterministic_and_rotation():
    M = _randn(4, 9, seed=1)
    V = M * M + _randn(4, 9, seed=2).abs()
    eye = torch.eye(4, dtype=torch.float64)
    for side, (m, v) in (("left", (M, V)), ("right", (M.T, V.T))):
        M2, V2 = rotate_adam_moments(m, v, eye, side)
        assert torch.equal(M2, m)
        assert_close(V2.numpy(), v.numpy(), rtol=0, atol=1e-12)
    C = _basis(4, 4, 3)
    _, V2 = rotate_adam_moments(M, M * M, C, "left")
    assert_close(V2.numpy(), ((C @ M) ** 2).numpy(), rtol=0, atol=1e-12)
    P_old = _basis(12, 4, 4)
    Q = _basis(4, 4, 5)
    P_new = P_old @ Q
    M2, _ = rotate_adam_moments(M, V, P_new.T @ P_old, "left")
    assert_close((P_new @ M2).numpy(), (P_old @ M).numpy(), rtol=0, atol=1e-12)
    M3, V3 = rotate_adam_moments(M.T, V.T, P_new.T @ P_old, "right")
    assert_close(M3.numpy(), M2.T.numpy(), rtol=0, atol=1e-12)
    assert np.all(V3.numpy() >= 0)


def test_bad_inputs():
    P = _basis(10, 2, 0)
    assert_param_error(grassmann_step, P, _randn(11, 3, seed=0), 0.1, param="G")
    assert_param_error(grassmann_step, P, _randn(10, 3, seed=0), -1.0, param="eta")
    assert_param_error(rotate_adam_moments, P, P, P, "up", param="side")
