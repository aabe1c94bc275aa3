r"""The closed-form instances: their model, gradient, minimal sharpness, minimisers and imbalance.

Each builder returns the parts a :class:`eosgd.LeastSquaresProblem` is made of (its arguments are
checked by the constructor that calls it). The closed forms, derived here:

**Diagonal linear net** (the factorisation :math:`f(u, v) = uv` is the case :math:`x = (1)`),
:math:`f(u, v) = \sum_i x_i u_i v_i`, :math:`w = (u, v) \in \mathbb{R}^{2d}`:
:math:`\nabla f = (x \odot v, x \odot u)` and :math:`S = \|\nabla f\|^2 = \sum_i x_i^2 (u_i^2 +
v_i^2) \ge 2 \sum_i x_i^2 |u_i v_i| \ge 2 m \sum_i |x_i u_i v_i| \ge 2 m |y|` on :math:`M`,
with :math:`m = \min_{x_i \neq 0} |x_i|`. Equality holds exactly when all the mass sits on the
coordinates with :math:`|x_i| = m`, with :math:`v_i = \sigma_i u_i`, :math:`\sigma_i =
\operatorname{sign}(x_i y)`, and :math:`\sum u_i^2 = |y| / m`: so :math:`S^* = 2 m |y|` and
:math:`\eta_c = 1 / (m |y|)`. The imbalances :math:`D_i = u_i^2 - v_i^2` are conserved by gradient
flow, and one GD step multiplies them by :math:`1 - \eta^2 r^2 x_i^2` (expand
:math:`(u - \eta r x v)^2 - (v - \eta r x u)^2`). On the line :math:`u_i = z`,
:math:`v_i = \sigma_i z` of a flattest coordinate, GD is the 1-D map
:math:`\zeta \mapsto \zeta (1 - \tilde\eta (\zeta^2 - 1))` of :math:`\zeta = z \sqrt{m/|y|}`,
:math:`\tilde\eta = \eta m |y|`; adding and subtracting the two equations of its 2-cycle gives
:math:`\zeta_\pm = (s \pm \sqrt{(\tilde\eta - 1)/\tilde\eta}) / 2`,
:math:`s = \sqrt{(3 + \tilde\eta)/\tilde\eta}`, which exists exactly for
:math:`\tilde\eta > 1` (:math:`\eta > \eta_c`).

**Depth-L product** :math:`f(w) = \prod_i w_i`: :math:`\partial_i f = \prod_{j \neq i} w_j` and
on :math:`M`, :math:`S = \sum_i y^2 / w_i^2 \ge L |y|^{2 - 2/L}` (AM-GM, since
:math:`\prod_i y^2/w_i^2 = y^{2L-2}`), with equality at the balanced points
:math:`|w_i| = |y|^{1/L}`; so :math:`S^* = L |y|^{2-2/L}` (:math:`= L` for :math:`y = 1`). The
balancedness :math:`D_i = w_i^2 - w_{i+1}^2` is conserved by gradient flow.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def diagonal_parts(x: np.ndarray, y: float) -> dict[str, Any]:
    r"""Parts of :math:`f(u, v) = \sum_i x_i u_i v_i` (``x`` has a nonzero entry, ``y != 0``)."""
    d = len(x)
    ax = np.abs(x)
    m = ax[ax > 0].min()
    flat = (ax > 0) & np.isclose(ax, m, rtol=1e-12, atol=0.0)  # the flattest coordinates
    sigma = np.sign(x * y)
    radius = np.sqrt(abs(y) / m)  # sqrt of sum_i u_i^2 over the flattest coordinates
    first = int(np.flatnonzero(flat)[0])

    def F(w: np.ndarray) -> np.ndarray:
        return (x * w[..., :d] * w[..., d:]).sum(-1)[..., None]

    def J(w: np.ndarray) -> np.ndarray:
        return np.concatenate([x * w[..., d:], x * w[..., :d]], -1)[..., None, :]

    xx = np.concatenate([x, x])
    swap = np.concatenate([np.arange(d, 2 * d), np.arange(d)])

    def resid_dir(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g = xx * w[:, swap]  # the gradient (x v, x u); f = g . w / 2
        r = 0.5 * np.einsum("np,np->n", g, w) - y
        return r, g * r[:, None]

    def imbalance(w: np.ndarray) -> np.ndarray:
        sq = w * w
        return sq[..., :d] - sq[..., d:]

    def minimum() -> tuple[float, np.ndarray]:
        w = np.zeros(2 * d)
        w[first] = radius
        w[d + first] = sigma[first] * radius
        return 2.0 * m * abs(y), w

    def distance(w: np.ndarray) -> np.ndarray:
        u, v = w[..., :d], w[..., d:]
        free = ax == 0  # coordinates that enter neither f nor S
        other = ~flat & ~free
        out = (u[..., other] ** 2 + v[..., other] ** 2).sum(-1)
        a, b = u[..., flat], v[..., flat]
        # the nearest (c, sigma c) with |c| = radius: c along a + sigma b (any c when that is 0)
        s = a + sigma[flat] * b
        norm = np.linalg.norm(s, axis=-1, keepdims=True)
        unit = np.where(norm > 0, s / np.where(norm > 0, norm, 1.0), np.eye(s.shape[-1])[0])
        c = radius * unit
        out = out + ((a - c) ** 2 + (b - sigma[flat] * c) ** 2).sum(-1)
        return np.sqrt(out)

    def orbit_guess(eta: float) -> tuple[np.ndarray, np.ndarray] | None:
        e = eta * m * abs(y)
        if e <= 1:
            return None
        s = np.sqrt((3 + e) / e)
        gap = np.sqrt((e - 1) / e)
        points = []
        for zeta in ((s + gap) / 2, (s - gap) / 2):
            w = np.zeros(2 * d)
            w[first] = zeta * radius
            w[d + first] = sigma[first] * zeta * radius
            points.append(w)
        return points[0], points[1]

    return {
        "F": F,
        "J": J,
        "resid_dir": resid_dir,
        "imbalance": imbalance,
        "minimum": minimum,
        "distance": distance,
        "orbit_guess": orbit_guess,
    }


def _prefix_suffix(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\prod_{j<i} w_j` and :math:`\prod_{j>i} w_j` along the last axis."""
    ones = np.ones(w.shape[:-1] + (1,))
    left = np.cumprod(np.concatenate([ones, w[..., :-1]], -1), -1)
    right = np.cumprod(np.concatenate([ones, w[..., :0:-1]], -1), -1)[..., ::-1]
    return left, right


def product_parts(depth: int, y: float) -> dict[str, Any]:
    r"""Parts of :math:`f(w) = \prod_{i=1}^L w_i` (``depth`` >= 2, ``y != 0``)."""
    c = abs(y) ** (1.0 / depth)
    target_sign = np.sign(y)

    def F(w: np.ndarray) -> np.ndarray:
        return np.prod(w, axis=-1)[..., None]

    def J(w: np.ndarray) -> np.ndarray:
        left, right = _prefix_suffix(w)
        return (left * right)[..., None, :]

    def resid_dir(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        left, right = _prefix_suffix(w)
        r = left[:, -1] * w[:, -1] - y
        return r, left * right * r[:, None]

    def imbalance(w: np.ndarray) -> np.ndarray:
        sq = w * w
        return sq[..., :-1] - sq[..., 1:]

    def minimum() -> tuple[float, np.ndarray]:
        w = np.full(depth, c)
        w[0] *= target_sign
        return depth * abs(y) ** (2.0 - 2.0 / depth), w

    def distance(w: np.ndarray) -> np.ndarray:
        signs = np.where(w < 0, -1.0, 1.0)
        wrong = np.prod(signs, axis=-1) != target_sign
        weakest = np.argmin(np.abs(w), axis=-1)
        flip = wrong[..., None] & (np.arange(depth) == weakest[..., None])
        signs = np.where(flip, -signs, signs)
        return np.linalg.norm(w - c * signs, axis=-1)

    return {
        "F": F,
        "J": J,
        "resid_dir": resid_dir,
        "imbalance": imbalance,
        "minimum": minimum,
        "distance": distance,
        "orbit_guess": None,
    }
