r"""BFGS with a weak-Wolfe line search, and the affine-invariant diagnostics of its convergence.

Iteration :math:`t` (inverse form, :math:`O(d^2)` per step):

1. :math:`g_t=\nabla f(x_t)`; stop when the Newton decrement :math:`\lambda_t\le` ``tol``
   (affine invariant; :math:`\lambda_t=\sqrt{g_t^\top\nabla^2f(x_t)^{-1}g_t}` when ``hess`` is
   given,
   else the BFGS estimate :math:`\sqrt{g_t^\top H_tg_t}`, invariant as well);
2. :math:`d_t=-H_tg_t`; a weak-Wolfe step :math:`\eta_t` (:mod:`scbfgs.linesearch`), trying 1 first;
3. :math:`s=x_{t+1}-x_t`, :math:`y=g_{t+1}-g_t`, :math:`\rho=1/(s^\top y)` and
   :math:`H_{t+1}=(I-\rho sy^\top)H_t(I-\rho ys^\top)+\rho ss^\top`, so that :math:`H_{t+1}y=s`.

The whole method is affine invariant: on :math:`z\mapsto f(Az+c)` from :math:`z_0=A^{-1}(x_0-c)`
with :math:`B_0\mapsto A^\top B_0A` it produces the same function values and steps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from scipy.linalg.blas import dger as _dger
from scipy.optimize import OptimizeResult

from paperkit import (
    Described,
    check_array,
    check_bool,
    check_callable,
    check_choice,
    check_int,
    check_memory,
    check_real,
    describe,
    param_error,
)
from scbfgs.diagnostics import psi, smallest_eigenvalue
from scbfgs.linesearch import LineSearchError, check_wolfe_constants, weak_wolfe_search

__all__ = ["BFGSResult", "bfgs", "initial_inverse", "minimize", "unit_step_onset"]

Array = np.ndarray
LINE_SEARCHES = ("log_bisection", "exact_quadratic")


class BFGSResult(OptimizeResult):
    """The result of :func:`bfgs`, a ``scipy.optimize.OptimizeResult`` with the run's history.

    Attributes:
        x, fun, jac: the last iterate, its value and gradient.
        nit, nfev, njev: iterations, function and gradient evaluations (also ``n_fev``, ``n_gev``).
        success, converged, status, message: whether the stopping rule was met, and why it stopped
            (``reason``: ``"tol"``, ``"rounding"``, ``"max_iter"``).
        f_hist: :math:`f(x_0),\\dots,f(x_T)`; eta_hist: the accepted steps; ls_trials: trials each.
        H: the final inverse-Hessian approximation.
        newton_decrement_hist: :math:`\\lambda_0,\\dots,\\lambda_T`.
        psi_hist: :math:`\\Psi(\\bar B_t)`, with ``track_psi=True`` (else None).
        t_unit: the first iteration after which every step is the unit step, up to the rounding
            floor when ``f_star`` is known (:func:`unit_step_onset`).
        delta0, M_sqrt_delta0: :math:`f(x_0)-f^*` and :math:`M\\sqrt{\\Delta_0}` when known.
    """


def initial_inverse(B0: Array | float | None, d: int, owner: str = "bfgs") -> Array:
    """``H_0 = B_0^{-1}`` from a symmetric positive definite (d, d) matrix, a positive scalar
    ``c`` (``B_0 = cI``) or None (``B_0 = I``); errors name ``B0`` of ``owner``.

    >>> initial_inverse(4.0, 2)
    array([[0.25, 0.  ],
           [0.  , 0.25]])
    """
    if B0 is None:
        return np.eye(d)
    if np.ndim(B0) == 0:
        return np.eye(d) / check_real("B0", owner, B0, low=0, low_open=True)
    B0 = check_array("B0", owner, B0, shape=(d, d)).astype(float)
    if not np.allclose(B0, B0.T, rtol=1e-10, atol=1e-12 * np.abs(B0).max()):
        raise param_error("B0", owner, "symmetric", Described("a non-symmetric matrix"))
    try:
        L = np.linalg.cholesky(B0)
    except np.linalg.LinAlgError:
        raise param_error("B0", owner, "positive definite", smallest_eigenvalue(B0)) from None
    Linv = np.linalg.inv(L)
    return Linv.T @ Linv


def unit_step_onset(
    eta_hist: Array | list[float], f_hist: Array | list[float], f_star: float | None = None
) -> int | None:
    r"""The first iteration after which every step is the unit step, or None.

    With ``f_star`` known, only the iterations before the rounding floor count (those with
    :math:`f_t-f^*>10^{-12}\max(1,|f^*|)`): below it, function differences are noise and the line
    search may wander.
    """
    eta = list(eta_hist)
    if f_star is not None:
        floor = 1e-12 * max(1.0, abs(f_star))
        above = [t for t in range(len(eta)) if f_hist[t] - f_star > floor]
        eta = eta[: above[-1] + 1] if above else []
    if not eta or eta[-1] != 1.0:
        return None
    t = len(eta)
    while t > 0 and eta[t - 1] == 1.0:
        t -= 1
    return t


def _update(H: Array, s: Array, y: Array) -> Array:
    r"""Inverse BFGS update of ``H`` in place, three passes over it, and ``H`` returned.

    :math:`(I-\rho sy^\top)H(I-\rho ys^\top)+\rho ss^\top = H+sw^\top+ws^\top` with
    :math:`w=-\rho Hy+\tfrac12(\rho^2y^\top Hy+\rho)s`: one product :math:`Hy` and two BLAS
    rank-one updates (``dger``), with no d x d temporary. ``H`` must be a C-contiguous float64
    symmetric matrix, so that ``H.T`` is the Fortran-ordered view BLAS updates in place.
    """
    rho = 1.0 / (s @ y)
    Hy = H @ y
    w = -rho * Hy + 0.5 * (rho * rho * (y @ Hy) + rho) * s
    Ht = H.T
    _dger(1.0, w, s, a=Ht, overwrite_a=True)  # H.T += w s', i.e. H += s w'
    _dger(1.0, s, w, a=Ht, overwrite_a=True)  # H += w s'
    return H


def bfgs(
    f: Callable[[Array], float],
    grad: Callable[[Array], Array],
    x0: Array,
    B0: Array | float | None = None,
    alpha: float = 0.1,
    beta: float = 0.9,
    max_iter: int = 1000,
    tol: float = 1e-12,
    line_search: Literal["log_bisection", "exact_quadratic"] = "log_bisection",
    hess: Callable[[Array], Array] | None = None,
    x_star: Array | None = None,
    f_star: float | None = None,
    *,
    f_tol: float | None = None,
    M: float | None = None,
    track_psi: bool = False,
) -> BFGSResult:
    r"""Minimise ``f`` with BFGS and a weak-Wolfe line search.

    Args:
        f, grad: the objective and its gradient.
        x0: the start, shape (d,).
        B0: the initial Hessian approximation: an SPD matrix, a scalar ``c`` (:math:`cI`) or None
            (I).
        alpha, beta: weak-Wolfe constants, :math:`0<\alpha<\tfrac12`, :math:`\alpha<\beta<1`.
        max_iter: iteration limit.
        tol: stop when the Newton decrement is at most ``tol``.
        line_search: ``"log_bisection"`` (weak Wolfe), or ``"exact_quadratic"``, the exact step
            :math:`-g^\top d/(d^\top\nabla^2f\,d)` for quadratics (needs ``hess``).
        hess: the Hessian, for the exact Newton decrement and the diagnostics (optional).
        x_star, f_star: the solution, for :math:`\Psi(\bar B_t)` (with ``hess``) and
            :math:`\Delta_0`.
        f_tol: also stop when :math:`f-f^*\le` ``f_tol`` (needs ``f_star``; affine invariant).
        M: the strong self-concordance constant (>= 0, may be inf), to report
            :math:`M\sqrt{\Delta_0}`.
        track_psi: record :math:`\Psi(\bar B_t)` every iteration (needs ``hess`` and
            ``x_star``). Off by default: each value inverts H and takes a log-determinant,
            :math:`O(d^3)`, where the iteration itself is :math:`O(d^2)`.

    Shapes: x0 and x_star (d,), B0 (d, d).

    NaN and inf: ``x0``, ``B0``, ``x_star``, ``f_star``, ``tol``, ``f_tol`` must be finite, and
    ``grad`` must return finite gradients (ValueError naming them, also mid-run); ``f`` may return
    inf (or NaN) outside its domain, which the line search treats as a rejected step, but not at
    ``x0``. Dimensions whose d x d matrices would not fit in memory are refused.

    Near the floor of float64 rounding, the Armijo test can fail for every step. When the line
    search fails with :math:`\lVert g_t\rVert\le10^{-8}\max(1,\lVert g_0\rVert)` the run stops
    as converged with reason ``"rounding"``; any other line-search failure raises
    :class:`LineSearchError`.
    """
    owner = "bfgs"
    check_callable("f", owner, f)
    check_callable("grad", owner, grad)
    check_callable("hess", owner, hess, optional=True)
    x = check_array("x0", owner, x0, shape=("d",)).astype(float)
    d = x.size
    check_memory("x0", owner, Described(f"a point of dimension {d}"), 4 * 8 * d * d)
    H = initial_inverse(B0, d, owner)
    alpha, beta = check_wolfe_constants(owner, alpha, beta)
    max_iter = check_int("max_iter", owner, max_iter, low=0)
    tol = check_real("tol", owner, tol, low=0)
    check_choice("line_search", owner, line_search, LINE_SEARCHES)
    if x_star is not None:
        x_star = check_array("x_star", owner, x_star, shape=(d,)).astype(float)
    if f_star is not None:
        f_star = check_real("f_star", owner, f_star)
    if f_tol is not None:
        f_tol = check_real("f_tol", owner, f_tol, low=0)
    if M is not None:
        M = check_real("M", owner, M, low=0, finite=False)
    if line_search == "exact_quadratic" and hess is None:
        raise param_error("hess", owner, "given with line_search='exact_quadratic'", None)
    if f_tol is not None and f_star is None:
        raise param_error("f_star", owner, "given with f_tol", None)
    track_psi = check_bool("track_psi", owner, track_psi)
    if track_psi and (hess is None or x_star is None):
        missing = "hess" if hess is None else "x_star"
        raise param_error(missing, owner, "given with track_psi=True", None)
    counts = {"f": 0, "g": 0}

    def f_eval(z: Array) -> float:
        counts["f"] += 1
        return float(f(z))

    def g_eval(z: Array) -> Array:
        counts["g"] += 1
        g = np.asarray(grad(z), dtype=float)
        if g.shape != (d,) or not np.isfinite(g).all():
            bad = int(g.size - np.isfinite(g).sum())
            raise param_error(
                "grad",
                owner,
                f"a function returning finite gradients of shape ({d},)",
                Described(f"a gradient of shape {g.shape} with {bad} NaN or inf entries"),
            )
        return g

    fx = f_eval(x)
    if not np.isfinite(fx):
        raise param_error(
            "x0",
            owner,
            "a point where f is finite (inside its domain)",
            Described(f"a point with f(x0) = {fx}"),
        )
    g = g_eval(x)
    hess_star = np.asarray(hess(x_star), dtype=float) if track_psi else None
    if track_psi and (hess_star.shape != (d, d) or not np.isfinite(hess_star).all()):
        raise param_error(
            "hess", owner, f"returning a finite ({d}, {d}) matrix at x_star", describe(hess_star)
        )
    if track_psi and np.linalg.eigvalsh(hess_star).min() <= 0:
        raise param_error(
            "hess", owner, "positive definite at x_star", smallest_eigenvalue(hess_star)
        )

    def decrement(x: Array, g: Array, Hg: Array) -> float:
        if hess is None:
            return float(np.sqrt(max(g @ Hg, 0.0)))
        return float(np.sqrt(max(g @ np.linalg.solve(hess(x), g), 0.0)))

    g0_norm = float(np.linalg.norm(g))
    Hg = H @ g  # one product per iteration serves the direction and the decrement
    f_hist, eta_hist, trials, lam_hist = [fx], [], [], [decrement(x, g, Hg)]
    psi_hist = [psi(np.linalg.inv(H), hess_star)] if track_psi else None
    reason = "max_iter"

    for _ in range(max_iter):
        if lam_hist[-1] <= tol or (f_tol is not None and f_hist[-1] - f_star <= f_tol):
            reason = "tol"
            break
        direction = -Hg
        seen: dict[str, tuple[float, Any]] = {}  # the line search's last f and gradient, reused
        if line_search == "exact_quadratic":
            eta, n_trials = float(-(g @ direction) / (direction @ hess(x) @ direction)), 0
        else:

            def phi(t: float, seen=seen, x=x, direction=direction) -> float:
                seen["f"] = (t, f_eval(x + t * direction))
                return seen["f"][1]

            def dphi(t: float, seen=seen, x=x, direction=direction) -> float:
                seen["g"] = (t, g_eval(x + t * direction))
                return float(seen["g"][1] @ direction)

            try:
                eta, n_trials = weak_wolfe_search(
                    phi, dphi, alpha, beta, 1.0, phi0=f_hist[-1], dphi0=float(g @ direction)
                )
            except LineSearchError:
                if np.linalg.norm(g) <= 1e-8 * max(1.0, g0_norm):
                    reason = "rounding"
                    break
                raise
        x_new = x + eta * direction
        f_new = seen["f"][1] if seen.get("f", (None,))[0] == eta else f_eval(x_new)
        g_new = seen["g"][1] if seen.get("g", (None,))[0] == eta else g_eval(x_new)
        s, y = x_new - x, g_new - g
        if s @ y <= 0:  # impossible after a weak-Wolfe step on a strictly convex f, save rounding
            reason = "rounding"
            break
        H = _update(H, s, y)
        x, g = x_new, g_new
        Hg = H @ g
        f_hist.append(f_new)
        eta_hist.append(eta)
        trials.append(n_trials)
        lam_hist.append(decrement(x, g, Hg))
        if track_psi:
            psi_hist.append(psi(np.linalg.inv(H), hess_star))

    t_unit = unit_step_onset(eta_hist, f_hist, f_star)
    delta0 = f_hist[0] - f_star if f_star is not None else None
    converged = reason in ("tol", "rounding")
    messages = {
        "tol": "The stopping rule was met.",
        "rounding": "Stopped at the float64 rounding floor: no further decrease is measurable.",
        "max_iter": "The iteration limit was reached.",
    }
    return BFGSResult(
        x=x,
        fun=f_hist[-1],
        jac=g,
        nit=len(eta_hist),
        nfev=counts["f"],
        njev=counts["g"],
        n_fev=counts["f"],
        n_gev=counts["g"],
        success=converged,
        converged=converged,
        status=0 if converged else 1,
        reason=reason,
        message=messages[reason],
        f_hist=np.array(f_hist),
        eta_hist=np.array(eta_hist),
        ls_trials=np.array(trials, dtype=int),
        H=H,
        newton_decrement_hist=np.array(lam_hist),
        psi_hist=None if psi_hist is None else np.array(psi_hist),
        t_unit=t_unit,
        delta0=delta0,
        M_sqrt_delta0=None
        if (M is None or delta0 is None)
        else float(M * np.sqrt(max(delta0, 0.0))),
    )


def minimize(
    fun: Callable[..., float],
    x0: Array,
    args: tuple = (),
    jac: Callable[..., Array] | None = None,
    hess: Callable[..., Array] | None = None,
    tol: float | None = None,
    options: dict[str, Any] | None = None,
) -> BFGSResult:
    """``scipy.optimize.minimize``'s calling convention for :func:`bfgs`.

    ``minimize(fun, x0, args=(), jac=grad, hess=None, tol=None, options={...})``; ``options`` takes
    any keyword of :func:`bfgs` (``B0``, ``alpha``, ``beta``, ``max_iter`` or scipy's ``maxiter``,
    ``line_search``, ``x_star``, ``f_star``, ``f_tol``, ``M``, ``track_psi``). ``jac`` is
    required (no finite differences). Checks and NaN policy as :func:`bfgs`.

    >>> res = minimize(lambda x: x @ x, np.ones(3), jac=lambda x: 2 * x)
    >>> bool(res.success), res.fun < 1e-20
    (True, True)
    """
    owner = "minimize"
    check_callable("fun", owner, fun)
    check_callable("jac", owner, jac)
    check_callable("hess", owner, hess, optional=True)
    if not isinstance(args, tuple):
        raise param_error("args", owner, "a tuple", describe(args), cls=TypeError)
    if options is not None and not isinstance(options, dict):
        raise param_error("options", owner, "a dict or None", describe(options), cls=TypeError)
    opts = dict(options or {})
    if "maxiter" in opts:
        opts["max_iter"] = opts.pop("maxiter")
    if tol is not None:
        opts["tol"] = tol

    def bind(fn):
        return None if fn is None else (lambda x: fn(x, *args))

    return bfgs(bind(fun), bind(jac), x0, hess=bind(hess), **opts)
