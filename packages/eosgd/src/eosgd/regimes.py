r"""The three regimes of the paper and what each one converges to.

With :math:`S^* = \min_M S` and :math:`\eta_c = 2 / S^*` (:func:`critical_lr`), a start near
:math:`M` whose projection is too sharp for the step size (:math:`\eta S(\pi(w_0)) > 2`) goes
through a transient instability, and then (arXiv 2510.17506, abstract and main results):

* subcritical, :math:`\eta < \eta_c`: the instability ends in finite time; GD converges linearly,
  with rate :math:`|1 - \eta S_\infty|`, to a minimiser with :math:`S^* < S_\infty < 2/\eta`;
* critical, :math:`\eta = \eta_c`: the instability never ends; :math:`|r_t| \asymp t^{-1/2}`,
  :math:`L \asymp t^{-1}`, towards the flattest minimiser;
* supercritical, :math:`\eta > \eta_c`: GD converges linearly to a period-two orbit
  :math:`(w_+, w_-)` centred on the flattest minimiser (:func:`period_two_orbit`), whose
  residual amplitude grows like :math:`\sqrt{\eta - \eta_c}`.

:func:`period_two_rate` gives the linear rate of that last convergence (and whether the orbit is
stable at all), :func:`manifold_start` the starts on :math:`M` of a prescribed sharpness.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from eosgd import manifold
from eosgd.problem import LeastSquaresProblem
from paperkit import check_array, check_real, describe, param_error

__all__ = [
    "classify_regime",
    "critical_lr",
    "manifold_start",
    "period_two_orbit",
    "period_two_rate",
]

Regime = Literal["subcritical", "critical", "supercritical"]


def _problem(owner: str, problem: Any) -> LeastSquaresProblem:
    if not isinstance(problem, LeastSquaresProblem):
        raise param_error(
            "problem", owner, "a LeastSquaresProblem", describe(problem), cls=TypeError
        )
    return problem


def critical_lr(problem: LeastSquaresProblem) -> float:
    r""":math:`\eta_c = 2 / S^*`, with :math:`S^*` from :meth:`LeastSquaresProblem.min_sharpness`.
    It takes no numbers (no NaN can arise).

    >>> critical_lr(LeastSquaresProblem.product(3))
    0.6666666666666666
    """
    problem = _problem("critical_lr", problem)
    return 2.0 / problem.min_sharpness()[0]


def classify_regime(problem: LeastSquaresProblem, eta: float, rtol: float = 1e-9) -> Regime:
    r"""``"critical"`` when :math:`|\eta - \eta_c| \le` ``rtol`` :math:`\eta_c`, else
    ``"subcritical"`` (:math:`\eta < \eta_c`) or ``"supercritical"``.

    NaN policy: NaN ``eta`` or ``rtol`` is refused.

    >>> prob = LeastSquaresProblem.factorization()
    >>> [classify_regime(prob, e) for e in (0.9, 1.0, 1.0 + 1e-12, 1.1)]
    ['subcritical', 'critical', 'critical', 'supercritical']
    """
    owner = "classify_regime"
    problem = _problem(owner, problem)
    eta = check_real("eta", owner, eta, low=0, low_open=True)
    rtol = check_real("rtol", owner, rtol, low=0, high=1, high_open=True)
    eta_c = critical_lr(problem)
    if abs(eta - eta_c) <= rtol * eta_c:
        return "critical"
    return "subcritical" if eta < eta_c else "supercritical"


def _gd_map(problem: LeastSquaresProblem, eta: float, w: np.ndarray) -> np.ndarray:
    r"""One GD step :math:`\Phi(w) = w - \eta J^\top (F(w) - y)` of the rows of ``w``."""
    return w - eta * problem._resid_dir(w)[1]


def _two_steps(problem: LeastSquaresProblem, eta: float, w: np.ndarray) -> np.ndarray:
    return _gd_map(problem, eta, _gd_map(problem, eta, w))


def _jacobian_two_steps(problem: LeastSquaresProblem, eta: float, w: np.ndarray) -> np.ndarray:
    r""":math:`D\Phi^2(w)` by central differences, ``(p, p)``."""
    p = len(w)
    h = 1e-6 * (1.0 + np.linalg.norm(w))
    shifts = np.concatenate([w + h * np.eye(p), w - h * np.eye(p)])
    images = _two_steps(problem, eta, shifts)
    return ((images[:p] - images[p:]) / (2 * h)).T


def period_two_rate(problem: LeastSquaresProblem, eta: float, w: np.ndarray) -> float:
    r"""The per-step linear rate of convergence of GD to the period-two orbit through ``w``:
    :math:`\sqrt{\rho(D\Phi^2(w))}`, the square root of the spectral radius of the Jacobian of
    two GD steps (by central differences). Below 1 the orbit attracts GD; above 1 it repels
    (GD leaves it, and may diverge). At a minimiser (a fixed point) it is
    :math:`\max(|1 - \eta \lambda|)` over the eigenvalues of :math:`J J^\top` and 1.

    NaN policy: NaN in ``w`` or ``eta`` is refused.

    >>> prob = LeastSquaresProblem.factorization()
    >>> w_plus, _ = period_two_orbit(prob, 1.1)
    >>> round(period_two_rate(prob, 1.1, w_plus), 4)  # the imbalance mode sets it
    0.8944
    """
    owner = "period_two_rate"
    problem = _problem(owner, problem)
    eta = check_real("eta", owner, eta, low=0, low_open=True)
    w = check_array("w", owner, w, shape=(problem.dim,)).astype(float)
    jac = _jacobian_two_steps(problem, eta, w)
    return float(np.sqrt(np.abs(np.linalg.eigvals(jac)).max()))


def _orbit_guess(problem: LeastSquaresProblem, eta: float) -> np.ndarray:
    r"""A point near the period-two orbit: the closed form when the problem has one, else the
    root on the normal line :math:`w^* + a n` (:math:`n` the unit normal at the flattest
    minimiser) of :math:`a \mapsto n \cdot (\Phi^2(w^* + a n) - w^* - a n)`, which is positive
    for small :math:`a > 0` above :math:`\eta_c` (two steps expand the normal direction by
    :math:`(1 - \eta S^*)^2 > 1`); the orbit of a symmetric problem lies on that line."""
    from scipy.optimize import brentq

    if problem._orbit_guess is not None:
        return problem._orbit_guess(eta)[0]
    _, w_star = problem.min_sharpness()
    normal = problem._normal(w_star[None])[0]
    scale = 1.0 + np.linalg.norm(w_star)

    def gap(a: np.ndarray) -> np.ndarray:
        points = w_star + np.atleast_1d(a)[:, None] * normal
        with np.errstate(over="ignore", invalid="ignore"):
            return (_two_steps(problem, eta, points) - points) @ normal

    grid = scale * np.geomspace(1e-6, 1.0, 121)
    values = gap(grid)
    change = np.flatnonzero((values[:-1] > 0) & ~(values[1:] > 0))
    if len(change) == 0:
        return w_star + grid[0] * normal
    lo, hi = grid[change[0]], grid[change[0] + 1]
    if not np.isfinite(values[change[0] + 1]):
        return w_star + lo * normal
    return w_star + brentq(lambda a: float(gap(a)[0]), lo, hi, xtol=1e-14) * normal


def period_two_orbit(problem: LeastSquaresProblem, eta: float) -> tuple[np.ndarray, np.ndarray]:
    r"""The period-two orbit :math:`(w_+, w_-)`, :math:`\Phi(w_\pm) = w_\mp`, of GD above the
    critical step size, centred on the flattest minimiser (the orbit around the minimiser
    :meth:`LeastSquaresProblem.min_sharpness` returns; symmetric copies exist).

    Found by ``scipy.optimize.root`` (``hybr``) on :math:`\Phi^2(w) - w` from the closed form
    for the factorisation and the diagonal net (the 2-cycle
    :math:`\zeta_\pm = (s \pm \sqrt{(\tilde\eta-1)/\tilde\eta})/2`,
    :math:`s = \sqrt{(3+\tilde\eta)/\tilde\eta}`, :math:`\tilde\eta = \eta/\eta_c`, of
    :math:`\zeta \mapsto \zeta(1 - \tilde\eta(\zeta^2 - 1))` on the line of the flattest
    coordinate), otherwise from the root of the two-step map on the normal line at :math:`w^*`.
    :math:`w_+` is the point with the larger mean
    residual (:math:`r > 0` for a scalar output). Whether GD converges to it:
    :func:`period_two_rate`.

    Raises ``ValueError`` (naming ``eta``) at or below :math:`\eta_c`, or when no orbit distinct
    from a fixed point is found.

    NaN policy: NaN ``eta`` is refused.

    >>> prob = LeastSquaresProblem.factorization()
    >>> w_plus, w_minus = period_two_orbit(prob, 1.1)
    >>> np.round(prob.residual(np.stack([w_plus, w_minus])), 6)  # exactly (z±)^2 - 1
    array([ 0.245597, -0.336506])
    """
    from scipy.optimize import root

    owner = "period_two_orbit"
    problem = _problem(owner, problem)
    eta = check_real("eta", owner, eta, low=0, low_open=True)
    if classify_regime(problem, eta) != "supercritical":
        raise param_error(
            "eta",
            owner,
            f"above the critical step size {critical_lr(problem):.6g} (no period-two orbit at "
            "or below it)",
            eta,
        )
    guess = _orbit_guess(problem, eta)
    with np.errstate(over="ignore", invalid="ignore"):
        sol = root(
            lambda w: _two_steps(problem, eta, w[None])[0] - w, guess, method="hybr", tol=1e-15
        )
    w_plus = np.asarray(sol.x, dtype=float)
    w_minus = _gd_map(problem, eta, w_plus[None])[0]
    scale = 1.0 + np.linalg.norm(w_plus)
    closes = np.linalg.norm(_gd_map(problem, eta, w_minus[None])[0] - w_plus) <= 1e-9 * scale
    if not (
        np.isfinite(w_plus).all() and closes and np.linalg.norm(w_plus - w_minus) > 1e-7 * scale
    ):
        raise param_error(
            "eta",
            owner,
            "a step size with a period-two orbit near the flattest minimiser (none found)",
            eta,
        )
    r = problem._F(np.stack([w_plus, w_minus])) - problem._y
    if r[0].mean() < r[1].mean():
        w_plus, w_minus = w_minus, w_plus
    return w_plus, w_minus


def manifold_start(
    problem: LeastSquaresProblem,
    sharpness: float | np.ndarray,
    offset: float = 1e-6,
    direction: np.ndarray | None = None,
    seed: int = 0,
) -> np.ndarray:
    r"""Starts on :math:`M` of prescribed sharpness, pushed off :math:`M` by ``offset`` along the
    normal: the paper's setting of a start near :math:`M` whose projection has
    :math:`S(\pi(w_0))` given.

    From the flattest minimiser :math:`w^*` the path :math:`a \mapsto \pi(w^* + a v)` runs along
    :math:`M` in the tangent direction :math:`v` (``direction`` projected onto
    :math:`T_{w^*} M`, or a seeded random tangent direction); ``brentq`` finds where its
    sharpness equals each target, and the start is that point plus ``offset`` times the unit
    normal (:math:`\nabla f / \|\nabla f\|`, so :math:`r_0 > 0` for a scalar output).

    Returns ``(p,)`` for one target, ``(n, p)`` for ``n`` targets. Raises ``ValueError`` for a
    target below :math:`S^*` or one the path cannot reach.

    NaN policy: NaN in any argument is refused.

    >>> prob = LeastSquaresProblem.factorization()
    >>> w0 = manifold_start(prob, 2.6, offset=0.0)
    >>> round(float(prob.sharpness(w0)), 12), bool(abs(prob.residual(w0)) < 1e-12)
    (2.6, True)
    """
    from scipy.optimize import brentq

    owner = "manifold_start"
    problem = _problem(owner, problem)
    targets = check_array("sharpness", owner, sharpness, ndim=(0, 1)).astype(float)
    offset = check_real("offset", owner, offset)
    if not isinstance(seed, int | np.integer) or isinstance(seed, bool):
        raise param_error("seed", owner, "an integer", describe(seed), cls=TypeError)
    if seed < 0:
        raise param_error("seed", owner, "an integer in [0, inf)", seed)
    S_star, w_star = problem.min_sharpness()
    if (targets < S_star * (1 - 1e-12)).any():
        raise param_error("sharpness", owner, f"at least S* = {S_star:.6g}", describe(targets))
    basis = problem._tangent(w_star)
    if direction is None:
        v = np.random.default_rng(seed).standard_normal(len(basis)) @ basis
    else:
        raw = check_array("direction", owner, direction, shape=(problem.dim,)).astype(float)
        v = basis.T @ (basis @ raw)
        if np.linalg.norm(v) <= 1e-12 * (1 + np.linalg.norm(raw)):
            raise param_error("direction", owner, "not normal to M at w*", describe(raw))
    v = v / np.linalg.norm(v)

    def on_path(a: float) -> np.ndarray:
        x, ok = problem._project((w_star + a * v)[None])
        if not ok[0]:
            raise param_error(
                "sharpness",
                owner,
                "reachable along the direction (the projection stopped converging)",
                describe(targets),
            )
        return x[0]

    def excess(a: float, target: float) -> float:
        return float(manifold.gram_sharpness(problem._J(on_path(a)[None]))[0]) - target

    starts = []
    for target in np.atleast_1d(targets):
        if target <= S_star:
            base = w_star
        else:
            hi = 0.1 * (1.0 + np.linalg.norm(w_star))
            for _ in range(60):
                if excess(hi, target) >= 0:
                    break
                hi *= 1.5
            else:
                raise param_error(
                    "sharpness", owner, "reachable along the direction", float(target)
                )
            base = on_path(brentq(excess, 0.0, hi, args=(target,), xtol=1e-15, rtol=1e-15))
        starts.append(base + offset * problem._normal(base[None])[0])
    out = np.array(starts)
    return out[0] if targets.ndim == 0 else out
