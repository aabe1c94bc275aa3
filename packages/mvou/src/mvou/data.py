r"""The synthetic problems of the reproduction (the paper's synthetic settings, at small scale).

* :func:`rotational_drift`: :math:`A = -I + 3J` with :math:`J` a random skew-symmetric matrix of
  spectral norm 1 (a damped rotation: non-equilibrium, non-gradient).
* :func:`gaussian_problem`: a random :math:`N(a, P_0)` and its exact reference push-forward.
* :func:`mixture`: four Gaussians on a circle (non-Gaussian marginals).
* :func:`repressilator`: a noisy three-gene repressilator observed at several times.
"""

from __future__ import annotations

import math

import torch

from paperkit import check_int, check_real

__all__ = [
    "gaussian_problem",
    "mixture",
    "repressilator",
    "repressilator_fixed_point",
    "repressilator_linear_fit",
    "rotational_drift",
]

F64 = torch.float64


def rotational_drift(d: int, generator: torch.Generator, rotation: float = 3.0) -> torch.Tensor:
    r""":math:`A = -I + \text{rotation}\cdot J`, :math:`J = (G - G^\top)/\|G - G^\top\|_2`."""
    d = check_int("d", "rotational_drift", d, low=2, high=1000)
    rotation = check_real("rotation", "rotational_drift", rotation)
    G = torch.randn(d, d, generator=generator, dtype=F64)
    J = G - G.T
    J = J / torch.linalg.matrix_norm(J, ord=2)
    return -torch.eye(d, dtype=F64) + rotation * J


def gaussian_problem(d: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    r"""A random initial law :math:`N(a, P_0)`: mean of norm about 2 (away from the fixed point,
    so the rotation shows) and a covariance with eigenvalues in about [0.05, 0.5]."""
    d = check_int("d", "gaussian_problem", d, low=1, high=1000)
    a = torch.randn(d, generator=generator, dtype=F64)
    a = 2.0 * a / a.norm()
    Q, _ = torch.linalg.qr(torch.randn(d, d, generator=generator, dtype=F64))
    w = 0.05 + 0.45 * torch.rand(d, generator=generator, dtype=F64)
    return a, (Q * w) @ Q.T


def gaussian_samples(
    mean: torch.Tensor, cov: torch.Tensor, n: int, generator: torch.Generator
) -> torch.Tensor:
    """``n`` draws of :math:`N(\\text{mean}, \\text{cov})`, ``(n, d)``."""
    L = torch.linalg.cholesky(cov)
    return mean + torch.randn(n, mean.shape[0], generator=generator, dtype=F64) @ L.T


def mixture(
    n: int, generator: torch.Generator, radius: float = 2.0, std: float = 0.3
) -> torch.Tensor:
    """``n`` points of an equal mixture of 4 Gaussians (std ``std``) at angles 0, 90, 180, 270
    degrees on a circle of radius ``radius`` around (1, 0), ``(n, 2)``."""
    n = check_int("n", "mixture", n, low=1, high=10**7)
    k = torch.randint(4, (n,), generator=generator)
    angle = k.to(F64) * (math.pi / 2)
    centre = torch.stack([1 + radius * angle.cos(), radius * angle.sin()], dim=1)
    return centre + std * torch.randn(n, 2, generator=generator, dtype=F64)


#: Repressilator, as in the paper's released repressilator experiment: production
#: ``alpha`` (beta = 10), Hill exponent n = 3 (k = 1, decay gamma = 1), noise 0.1 per unit real
#: time, 10 snapshots at real times 0, 1, ..., 9 (horizon 9, mapped to [0, 1]), initial cloud
#: N((1, 1, 2), 0.1^2 I) and Euler-Maruyama step 0.05 in real time.
REPRESSILATOR = {
    "alpha": 10.0,
    "hill": 3.0,
    "noise": 0.1,
    "horizon": 9.0,
    "snapshots": 10,
    "start": (1.0, 1.0, 2.0),
    "start_std": 0.1,
    "dt": 0.05,
}


def repressilator_drift(x: torch.Tensor) -> torch.Tensor:
    r"""Protein-only repressilator, :math:`\dot x_i = \alpha/(1 + x_{i-1}^h) - x_i` (real time)."""
    p = REPRESSILATOR
    prev = x.roll(1, dims=1).clamp_min(0)
    return p["alpha"] / (1 + prev ** p["hill"]) - x


def repressilator_fixed_point() -> tuple[torch.Tensor, torch.Tensor]:
    r"""The symmetric fixed point :math:`x^* = \alpha/(1 + x^{*h})` (Newton) and the Jacobian
    :math:`\partial f(x^*)` there, in real time: the paper's "ground-truth" mvOU reference
    (:math:`m = x^*`, :math:`A = H\,\partial f(x^*)` in rescaled time)."""
    p = REPRESSILATOR
    x = torch.tensor(1.0, dtype=F64)
    for _ in range(60):
        g = x - p["alpha"] / (1 + x ** p["hill"])
        x = x - g / (1 + p["alpha"] * p["hill"] * x ** (p["hill"] - 1) / (1 + x ** p["hill"]) ** 2)
    J = torch.func.jacrev(lambda v: repressilator_drift(v[None])[0])(x.repeat(3))
    return x.repeat(3), J


def repressilator(
    n: int, times: list[float], generator: torch.Generator, dt: float | None = None
) -> list[torch.Tensor]:
    r"""Independent snapshots (``n`` cells each, fresh cells per time, as in single-cell data) of
    the repressilator SDE :math:`dx = H f(x)dt + \sqrt{H}\,s\,dB` in rescaled time
    :math:`t \in [0, 1]` (:math:`H` = ``horizon``), by Euler–Maruyama with step ``dt`` (default:
    0.05 real time units). Returns one ``(n, 3)`` tensor per time in ``times``."""
    p = REPRESSILATOR
    H = p["horizon"]
    dt = p["dt"] / H if dt is None else dt
    start = torch.tensor(p["start"], dtype=F64)
    x = start + p["start_std"] * torch.randn(n * len(times), 3, generator=generator, dtype=F64)
    out, t = [], 0.0
    for k, target in enumerate(times):
        while t < target - 1e-12:
            h = min(dt, target - t)
            x = (
                x
                + H * h * repressilator_drift(x)
                + math.sqrt(H * h)
                * p["noise"]
                * torch.randn(x.shape, generator=generator, dtype=F64)
            )
            t += h
        cells = x.view(len(times), n, 3)
        out.append(cells[k].clone())
    return out


def repressilator_linear_fit(snapshots: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The best mvOU drift for the repressilator's data: least squares of the true drift in
    rescaled time, :math:`H f(x) \approx A x + c` over the pooled ``snapshots`` ``(n_k, 3)``;
    returns :math:`(A, m)` with :math:`m = -A^{-1}c`."""
    x = torch.cat(list(snapshots)).to(F64)
    design = torch.cat([x, torch.ones(x.shape[0], 1, dtype=F64)], dim=1)
    beta = torch.linalg.lstsq(design, REPRESSILATOR["horizon"] * repressilator_drift(x)).solution
    A, c = beta[:3].T, beta[3]
    return A, torch.linalg.solve(A, -c)
