import math

import torch
from scipy.optimize import brentq

from mvou.data import REPRESSILATOR, repressilator_fixed_point, repressilator_linear_fit

F64 = torch.float64


def test_linear_fit_of_the_repressilator_is_its_jacobian_on_a_small_cloud():
    # at the symmetric fixed point x* = alpha / (1 + x*^h), f has Jacobian -I on the diagonal
    # and -alpha h x*^(h-1) / (1 + x*^h)^2 at (i, i - 1); the fit is in rescaled time (x H)
    alpha, h, H = REPRESSILATOR["alpha"], REPRESSILATOR["hill"], REPRESSILATOR["horizon"]
    xs = brentq(lambda x: x - alpha / (1 + x**h), 0.0, alpha)
    g = torch.Generator().manual_seed(0)
    cloud = xs + 1e-4 * torch.randn(4000, 3, generator=g, dtype=F64)
    A, m = repressilator_linear_fit([cloud[:2000], cloud[2000:]])
    off = -alpha * h * xs ** (h - 1) / (1 + xs**h) ** 2
    J = -torch.eye(3, dtype=F64) + off * torch.eye(3, dtype=F64).roll(-1, dims=1)
    assert math.isclose(float(J[0, 2]), off)  # x_0 is repressed by x_2
    assert torch.allclose(A, H * J, rtol=0, atol=1e-3 * float(J.norm()) * H)
    assert torch.allclose(m, torch.full((3,), xs, dtype=F64), atol=1e-3)


def test_spectra_reads_the_stored_drifts_and_linearises_the_fixed_point():
    from mvou.repressilator_study import spectra

    eye = torch.eye(3).tolist()
    rows = spectra(
        {"data": {"repressilator_A_least_squares": eye, "repressilator_A_estimates": [eye]}}
    )
    assert [r["matrix"][:5] for r in rows] == ["H * J", "least", "A est"]
    assert rows[1]["eigenvalues"] == "1.00, 1.00, 1.00"
    # the fixed point of a cyclic repressor loop is an unstable focus: one real, two complex
    assert rows[0]["eigenvalues"].count("i") == 2 and "x* = 1.70" in rows[0]["matrix"]


def test_fixed_point_and_its_jacobian():
    alpha, h = REPRESSILATOR["alpha"], REPRESSILATOR["hill"]
    xs = brentq(lambda x: x - alpha / (1 + x**h), 0.0, alpha)
    x, J = repressilator_fixed_point()
    assert torch.allclose(x, torch.full((3,), xs, dtype=F64), atol=1e-12)
    off = -alpha * h * xs ** (h - 1) / (1 + xs**h) ** 2
    expected = -torch.eye(3, dtype=F64) + off * torch.eye(3, dtype=F64).roll(-1, dims=1)
    assert torch.allclose(J, expected, atol=1e-12)
