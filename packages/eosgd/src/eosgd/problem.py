r"""Overparametrised least squares :math:`L(w) = \tfrac12 \|F(w) - y\|^2` and its manifold of
global minimisers :math:`M = \{w : F(w) = y\}` (the paper's setting, arXiv 2510.17506).

For a scalar output :math:`f: \mathbb{R}^p \to \mathbb{R}` (:math:`p \ge 2`) the residual is
:math:`r = f(w) - y`, the Hessian on :math:`M` is :math:`\nabla^2 L = \nabla f \nabla f^\top`,
so the sharpness is :math:`S(w) = \|\nabla f(w)\|^2` and the critical step size is
:math:`\eta_c = 2 / S^*` with :math:`S^* = \min_{w \in M} S(w)`. For :math:`q` outputs the
sharpness is :math:`\lambda_{\max}(J J^\top)` (the Gauss-Newton part of the Hessian, which is
the whole Hessian on :math:`M`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from eosgd import instances, manifold, tanhnet
from paperkit import check_array, check_choice, check_int, check_real, describe, param_error

__all__ = ["LeastSquaresProblem"]

OWNER = "LeastSquaresProblem"


def _check_target(owner: str, y: Any) -> np.ndarray:
    """A finite real number, or a finite 1-D array of them; returned as a 1-D float array."""
    if isinstance(y, numbers.Real) and not isinstance(y, bool):
        return np.array([check_real("y", owner, y)])
    return check_array("y", owner, y, ndim=1).astype(float)


class LeastSquaresProblem:
    r"""An overparametrised least-squares problem :math:`L(w) = \tfrac12 \|F(w) - y\|^2`.

    Build one with a closed-form constructor, :meth:`factorization`, :meth:`product`,
    :meth:`diagonal_net`, the generic :meth:`tanh_net`, or from your own model:

    Args:
        f: the model, vectorised: ``w (..., p) -> (...)`` for a scalar output, ``(..., q)`` for
            ``q`` outputs.
        jacobian: its derivative, ``w (..., p) -> (..., p)`` (the gradient) for a scalar output,
            ``(..., q, p)`` otherwise.
        y: the target, a real number (scalar output) or a 1-D array of ``q`` numbers.
        dim: the number of parameters ``p`` (at least 2: overparametrised).
        name: a label for tables.
        seed: seeds the search for points of ``M`` (below) and the SLSQP starts of
            :meth:`min_sharpness`.

    The constructor checks that :math:`M` is not empty and is a manifold where it was found:
    Gauss-Newton from 8 seeded starts must reach :math:`F = y` at a point where :math:`J J^\top`
    is invertible (:math:`\nabla f \neq 0`). A target the model cannot attain (``y <= 0`` for
    :math:`f = u^2 + v^2`) is refused with a ``ValueError`` naming ``y``.

    NaN policy: every method refuses parameters with NaN or inf (``ValueError``).

    >>> import numpy as np
    >>> prob = LeastSquaresProblem.factorization()
    >>> prob.min_sharpness()[0], prob.sharpness(np.array([2.0, 0.5]))
    (2.0, 4.25)
    >>> circle = LeastSquaresProblem(lambda w: (w**2).sum(-1), lambda w: 2 * w, y=1.0, dim=2)
    >>> round(circle.min_sharpness()[0], 8)  # |grad f|^2 = 4 on the unit circle
    4.0
    """

    def __init__(
        self,
        f: Callable[[np.ndarray], np.ndarray],
        jacobian: Callable[[np.ndarray], np.ndarray],
        y: float | np.ndarray,
        dim: int,
        *,
        name: str = "custom",
        seed: int = 0,
    ) -> None:
        for arg, fn in (("f", f), ("jacobian", jacobian)):
            if not callable(fn):
                raise param_error(
                    arg, OWNER, "a callable of w (..., p)", describe(fn), cls=TypeError
                )
        target = _check_target(OWNER, y)
        dim = check_int("dim", OWNER, dim, low=2)
        if not isinstance(name, str):
            raise param_error("name", OWNER, "a string", describe(name), cls=TypeError)
        seed = check_int("seed", OWNER, seed, low=0)
        scalar = isinstance(y, numbers.Real)
        F, J = self._wrap_user(f, jacobian, target, dim, scalar)
        self._setup(name, dim, target, scalar, {"F": F, "J": J}, seed)
        anchors = manifold.feasible_points(F, J, target, dim, seed)
        if len(anchors) == 0:
            anchors = manifold.feasible_points(F, J, target, dim, seed, scale=3.0)
        if len(anchors) == 0:
            raise param_error(
                "y",
                OWNER,
                "a value the model attains at a regular point (M = {F = y} non-empty, with "
                "J J^T invertible there; Gauss-Newton from 16 seeded starts found no such point)",
                float(y) if scalar else describe(y),
            )
        self._anchors = anchors

    # ----------------------------------------------------------------------------- building
    @staticmethod
    def _wrap_user(f, jacobian, target, dim, scalar):
        """``F (..., q)`` and ``J (..., q, p)`` from the user's callables, checked on one point."""
        q = len(target)

        def F(w: np.ndarray) -> np.ndarray:
            out = np.asarray(f(w), dtype=float)
            return out[..., None] if scalar else out

        def J(w: np.ndarray) -> np.ndarray:
            out = np.asarray(jacobian(w), dtype=float)
            return out[..., None, :] if scalar else out

        probe = np.linspace(0.5, 1.5, dim)[None]
        try:
            shapes = (F(probe).shape, J(probe).shape)
        except Exception as exc:  # the user's callable failed on a (1, p) batch
            raise param_error(
                "f", OWNER, f"callables accepting w of shape (..., {dim})", f"an error: {exc}"
            ) from exc
        if shapes[0] != (1, q):
            raise param_error("f", OWNER, f"of output shape (..., {q})", describe(F(probe)[0]))
        if shapes[1] != (1, q, dim):
            want = f"(..., {dim})" if scalar else f"(..., {q}, {dim})"
            raise param_error("jacobian", OWNER, f"of output shape {want}", shapes[1][1:])
        return F, J

    def _setup(self, name, dim, target, scalar, parts, seed) -> None:
        self.name = name
        self.dim = dim
        self._y = target
        self._scalar = scalar
        self._F = parts["F"]
        self._J = parts["J"]
        self._resid_dir = parts.get("resid_dir") or self._generic_resid_dir
        self._imbalance = parts.get("imbalance")
        self._minimum = parts.get("minimum")
        self._distance = parts.get("distance")
        self._orbit_guess = parts.get("orbit_guess")
        self._seed = seed
        self._cache: dict[str, tuple[float, np.ndarray]] = {}

    @classmethod
    def _closed(cls, name: str, dim: int, y: float, parts: dict[str, Any]) -> LeastSquaresProblem:
        self = cls.__new__(cls)
        self._setup(name, dim, np.array([float(y)]), True, parts, 0)
        self._anchors = parts["minimum"]()[1][None]
        return self

    def _generic_resid_dir(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = self._F(w) - self._y
        d = np.einsum("nqp,nq->np", self._J(w), r)
        return (r[:, 0] if self._scalar else r), d

    @classmethod
    def factorization(cls, y: float = 1.0) -> LeastSquaresProblem:
        r"""(a) :math:`f(u, v) = u v`, :math:`w = (u, v)`: :math:`S = u^2 + v^2`; on :math:`M`,
        :math:`S = \sqrt{D^2 + 4y^2}` with :math:`D = u^2 - v^2`; :math:`S^* = 2|y|` at
        :math:`|u| = |v| = \sqrt{|y|}`, :math:`\eta_c = 1/|y|`. ``y`` must be nonzero (at
        ``y = 0``, :math:`M` is the two axes, crossing where :math:`\nabla f = 0`).

        >>> LeastSquaresProblem.factorization().min_sharpness()
        (2.0, array([1., 1.]))
        """
        owner = f"{OWNER}.factorization"
        y = check_real("y", owner, y)
        if y == 0:
            raise param_error("y", owner, "nonzero (M is singular at y = 0)", y)
        return cls._closed("factorization", 2, y, instances.diagonal_parts(np.ones(1), y))

    @classmethod
    def product(cls, depth: int, y: float = 1.0) -> LeastSquaresProblem:
        r"""(b) the depth-L scalar product :math:`f(w) = \prod_{i=1}^L w_i`: :math:`S^* =
        L |y|^{2-2/L}` at the balanced points :math:`|w_i| = |y|^{1/L}` (:math:`S^* = L`,
        :math:`\eta_c = 2/L` for :math:`y = 1`). ``depth`` >= 2, ``y`` nonzero.

        >>> LeastSquaresProblem.product(3).min_sharpness()[0]
        3.0
        """
        owner = f"{OWNER}.product"
        depth = check_int("depth", owner, depth, low=2, high=10_000)
        y = check_real("y", owner, y)
        if y == 0:
            raise param_error("y", owner, "nonzero (M is singular at y = 0)", y)
        return cls._closed(f"product(L={depth})", depth, y, instances.product_parts(depth, y))

    @classmethod
    def diagonal_net(cls, x: np.ndarray, y: float = 1.0) -> LeastSquaresProblem:
        r"""(c) the diagonal linear net on one datum :math:`x \in \mathbb{R}^d`,
        :math:`f(u, v) = \sum_i x_i u_i v_i`, :math:`w = (u, v) \in \mathbb{R}^{2d}`:
        :math:`S = \sum_i x_i^2 (u_i^2 + v_i^2)`, :math:`S^* = 2 \min_{x_i \neq 0} |x_i|\,|y|`
        with all the mass on the smallest nonzero :math:`|x_i|`, :math:`\eta_c = 1/(\min
        |x_i|\,|y|)`. ``x`` needs a nonzero entry (coordinates with :math:`x_i = 0` are free
        directions of :math:`M`); ``y`` must be nonzero.

        >>> LeastSquaresProblem.diagonal_net(np.array([1.0, 0.5, 2.0])).min_sharpness()[0]
        1.0
        """
        owner = f"{OWNER}.diagonal_net"
        x = check_array("x", owner, x, ndim=1).astype(float)
        if not np.any(x != 0):
            raise param_error("x", owner, "an array with a nonzero entry (f = 0 otherwise)", x)
        y = check_real("y", owner, y)
        if y == 0:
            raise param_error("y", owner, "nonzero (M is singular at y = 0)", y)
        return cls._closed(
            f"diagonal_net(d={len(x)})", 2 * len(x), y, instances.diagonal_parts(x, y)
        )

    @classmethod
    def tanh_net(
        cls, X: np.ndarray, Y: np.ndarray, width: int = 4, seed: int = 0
    ) -> LeastSquaresProblem:
        r"""(d) the generic instance: a two-layer tanh network :math:`x \mapsto A \tanh(W x)` of
        width ``width`` fitted to ``X (N, d)``, ``Y (N,)`` or ``(N, o)`` by full-batch least
        squares (see :mod:`eosgd.tanhnet`); :math:`p = h (d + o)` must be at least :math:`q =
        N o`. :math:`S^*` has no closed form (SLSQP, seeded by ``seed``).

        >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
        >>> LeastSquaresProblem.tanh_net(X, np.array([0.5, -0.5]), width=2).dim
        6
        """
        owner = f"{OWNER}.tanh_net"
        dims: dict = {}
        X = check_array("X", owner, X, shape=("N", "d"), dims=dims).astype(float)
        Y = check_array("Y", owner, Y, ndim=(1, 2)).astype(float)
        if Y.shape[0] != X.shape[0]:
            raise param_error("Y", owner, f"of shape ({X.shape[0]},) or ({X.shape[0]}, o)", Y.shape)
        Y2 = Y[:, None] if Y.ndim == 1 else Y
        width = check_int("width", owner, width, low=1, high=10_000)
        seed = check_int("seed", owner, seed, low=0)
        p, q = width * (X.shape[1] + Y2.shape[1]), Y2.size
        if q > p:
            raise param_error(
                "width", owner, f"large enough that p = width (d + o) >= N o = {q}", width
            )
        parts = tanhnet.tanh_parts(X, Y2, width)
        self = cls.__new__(cls)
        self._setup(f"tanh_net(N={X.shape[0]}, h={width})", p, Y2.ravel(), q == 1, parts, seed)
        anchors = manifold.feasible_points(parts["F"], parts["J"], self._y, p, seed)
        if len(anchors) == 0:
            raise param_error("Y", owner, "targets the network can fit (none reached)", describe(Y))
        self._anchors = anchors
        return self

    # ----------------------------------------------------------------------------- properties
    @property
    def n_outputs(self) -> int:
        """:math:`q`, the number of outputs (1 for a scalar output)."""
        return len(self._y)

    @property
    def y(self) -> float | np.ndarray:
        """The target: a float for a scalar output, else a ``(q,)`` array."""
        return float(self._y[0]) if self._scalar else self._y.copy()

    @property
    def has_imbalance(self) -> bool:
        """Whether :meth:`imbalance` (the quantities gradient flow conserves) is defined."""
        return self._imbalance is not None

    @property
    def has_closed_form(self) -> bool:
        """Whether :math:`S^*`, :math:`w^*` are known in closed form."""
        return self._minimum is not None

    def __repr__(self) -> str:
        return f"LeastSquaresProblem({self.name}, p={self.dim}, q={self.n_outputs})"

    # ----------------------------------------------------------------------------- evaluation
    def _points(self, w: Any, method: str) -> np.ndarray:
        owner = f"{OWNER}.{method}"
        w = check_array("w", owner, w).astype(float)
        if w.ndim == 0 or w.shape[-1] != self.dim:
            raise param_error("w", owner, f"of shape (..., {self.dim})", describe(w))
        return w

    def f(self, w: np.ndarray) -> np.ndarray | float:
        """The model :math:`F(w)`: ``(...)`` for a scalar output, ``(..., q)`` otherwise."""
        w = self._points(w, "f")
        out = self._F(w)
        return out[..., 0] if self._scalar else out

    def grad(self, w: np.ndarray) -> np.ndarray:
        r""":math:`\nabla f(w)`, ``(..., p)`` (scalar outputs; else see :meth:`jacobian`)."""
        w = self._points(w, "grad")
        if not self._scalar:
            raise param_error(
                "w", f"{OWNER}.grad", "for a scalar-output problem (use jacobian)", self.name
            )
        return self._J(w)[..., 0, :]

    def jacobian(self, w: np.ndarray) -> np.ndarray:
        r""":math:`J(w) = \partial F / \partial w`, ``(..., q, p)``."""
        return self._J(self._points(w, "jacobian"))

    def residual(self, w: np.ndarray) -> np.ndarray:
        """:math:`r = F(w) - y`: ``(...)`` for a scalar output, ``(..., q)`` otherwise."""
        w = self._points(w, "residual")
        r = self._F(w) - self._y
        return r[..., 0] if self._scalar else r

    def loss(self, w: np.ndarray) -> np.ndarray:
        r""":math:`L(w) = \tfrac12 \|F(w) - y\|^2`, ``(...)``."""
        w = self._points(w, "loss")
        return 0.5 * ((self._F(w) - self._y) ** 2).sum(-1)

    def sharpness(self, w: np.ndarray) -> np.ndarray:
        r""":math:`S(w) = \lambda_{\max}(J J^\top)` (:math:`= \|\nabla f\|^2` for a scalar
        output), ``(...)``; on :math:`M` it is :math:`\lambda_{\max}(\nabla^2 L)`."""
        out = manifold.gram_sharpness(self._J(self._points(w, "sharpness")))
        return float(out) if np.ndim(out) == 0 else out

    def imbalance(self, w: np.ndarray) -> np.ndarray:
        r"""The quantities gradient flow conserves, ``(..., k)``: :math:`u_i^2 - v_i^2` for the
        factorisation and the diagonal net, :math:`w_i^2 - w_{i+1}^2` for the product. GD changes
        them only while :math:`r \neq 0`: :math:`D_{t+1} = D_t (1 - \eta^2 r_t^2 x_i^2)` for the
        diagonal net. Not defined for the tanh net or a custom problem (``ValueError``)."""
        w = self._points(w, "imbalance")
        if self._imbalance is None:
            raise param_error(
                "w", f"{OWNER}.imbalance", "for a problem with an imbalance", self.name
            )
        return self._imbalance(w)

    # ----------------------------------------------------------------------------- manifold
    def project(self, w: np.ndarray) -> np.ndarray:
        r"""Orthogonal projection :math:`\pi(w) = \arg\min_{x \in M} \|x - w\|` (the nearby
        one), ``(..., p)``, by the Newton-type iteration of :func:`eosgd.manifold.newton_projection`
        (at most 50 iterations, tolerance 1e-13). A point too far from :math:`M` for it to
        converge is refused (``ValueError`` naming ``w``).

        >>> prob = LeastSquaresProblem.factorization()
        >>> x = prob.project(np.array([1.5, 1.5]))
        >>> x.round(12), bool(abs(prob.residual(x)) < 1e-12)
        (array([1., 1.]), True)
        """
        w = self._points(w, "project")
        x, ok = self._project(w.reshape(-1, self.dim))
        if not ok.all():
            raise param_error(
                "w",
                f"{OWNER}.project",
                "close enough to M for the projection to converge",
                describe(w),
            )
        return x.reshape(w.shape)

    def _project(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return manifold.newton_projection(self._F, self._J, self._y, w)

    def min_sharpness(self, method: str = "auto") -> tuple[float, np.ndarray]:
        """:math:`(S^*, w^*)`: the minimal sharpness on :math:`M` and a minimiser.

        ``method``: ``"closed"`` (the closed form; ``ValueError`` where there is none),
        ``"slsqp"`` (scipy SLSQP on :math:`M`, ``ftol`` 1e-14, best of 5 seeded starts reached
        by Gauss-Newton from normal draws), or ``"auto"`` (closed form when there is one).
        Results are cached per method.
        """
        method = check_choice(
            "method", f"{OWNER}.min_sharpness", method, ("auto", "closed", "slsqp")
        )
        if method == "auto":
            method = "closed" if self._minimum is not None else "slsqp"
        if method == "closed" and self._minimum is None:
            raise param_error(
                "method",
                f"{OWNER}.min_sharpness",
                "'slsqp' or 'auto' (no closed form for this problem)",
                method,
            )
        if method not in self._cache:
            if method == "closed":
                S, w = self._minimum()
            else:
                S, w = self._slsqp()
            self._cache[method] = (float(S), w)
        S, w = self._cache[method]
        return S, w.copy()

    def _slsqp(self) -> tuple[float, np.ndarray]:
        starts = manifold.feasible_points(
            self._F, self._J, self._y, self.dim, self._seed + 1, count=16
        )[:5]
        if len(starts) == 0:
            starts = self._anchors[:5]
        try:
            return manifold.slsqp_min_sharpness(self._F, self._J, self._y, starts)
        except RuntimeError as exc:
            raise param_error(
                "method",
                f"{OWNER}.min_sharpness",
                "a method that converges here (SLSQP ended on M from no start)",
                "slsqp",
            ) from exc

    def distance_to_minimisers(self, w: np.ndarray) -> np.ndarray:
        r"""Distance from ``w`` to the set of flattest minimisers :math:`\arg\min_M S`
        (closed forms: the whole set, e.g. :math:`\pm(1, 1)` for the factorisation; otherwise
        the distance to the one :math:`w^*` that :meth:`min_sharpness` found), ``(...)``."""
        w = self._points(w, "distance_to_minimisers")
        return self._dist(w)

    def _dist(self, w: np.ndarray) -> np.ndarray:
        if self._distance is not None:
            return self._distance(w)
        return np.linalg.norm(w - self.min_sharpness()[1], axis=-1)

    def normal(self, w: np.ndarray) -> np.ndarray:
        r"""The unit normal direction of largest curvature at ``w``: :math:`J^\top v /
        \|J^\top v\|` with :math:`v` the top eigenvector of :math:`J J^\top`
        (:math:`\nabla f / \|\nabla f\|` for a scalar output), ``(..., p)``."""
        w = self._points(w, "normal")
        out = self._normal(w)
        if not np.isfinite(out).all():
            raise param_error("w", f"{OWNER}.normal", "a point where J != 0", describe(w))
        return out

    def _normal(self, w: np.ndarray) -> np.ndarray:
        J = self._J(w)
        _, vecs = np.linalg.eigh(manifold.gram(J))
        g = np.einsum("...qp,...q->...p", J, vecs[..., -1])
        with np.errstate(invalid="ignore", divide="ignore"):
            return g / np.linalg.norm(g, axis=-1, keepdims=True)

    def tangent_basis(self, w: np.ndarray) -> np.ndarray:
        """An orthonormal basis of the tangent space :math:`T_w M` (the null space of
        :math:`J(w)`), ``(p - q, p)``, for one point ``w (p,)``."""
        w = self._points(w, "tangent_basis")
        if w.ndim != 1:
            raise param_error("w", f"{OWNER}.tangent_basis", f"of shape ({self.dim},)", describe(w))
        return self._tangent(w)

    def _tangent(self, w: np.ndarray) -> np.ndarray:
        J = self._J(w[None])[0]
        _, _, vt = np.linalg.svd(J)
        return vt[self.n_outputs :]
