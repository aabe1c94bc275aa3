r"""The weak-Wolfe line search by log-bisection (Jin, Jiang and Mokhtari, 2024).

For :math:`\phi(\eta)=f(x+\eta d)` with :math:`\phi'(0)=g^\top d<0`, a step :math:`\eta`
satisfies the weak Wolfe conditions when

.. math::
    \phi(\eta)\le\phi(0)+\alpha\,\eta\,\phi'(0)\quad\text{(Armijo)},\qquad
    \phi'(\eta)\ge\beta\,\phi'(0)\quad\text{(curvature)},

with :math:`0<\alpha<\tfrac12` and :math:`\alpha<\beta<1`. The search keeps a bracket
:math:`[\ell, u]` (initially :math:`[0,\infty)`) and starts from :math:`\eta=1`: a step
failing Armijo becomes :math:`u`, one failing the curvature condition becomes :math:`\ell`; the
next trial doubles :math:`\eta` while :math:`u=\infty`, halves it while :math:`\ell=0`, and
otherwise takes the geometric
mean :math:`\sqrt{\ell u}`. Trying :math:`\eta=1` first is what lets BFGS take unit steps in its
superlinear phase.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

from paperkit import check_callable, check_int, check_real

__all__ = ["LineSearchError", "check_wolfe", "check_wolfe_constants", "weak_wolfe_search"]


class LineSearchError(RuntimeError):
    """The line search found no weak-Wolfe step (non-descent direction, or too many trials)."""


def check_wolfe_constants(owner: str, alpha: float, beta: float) -> tuple[float, float]:
    """``(alpha, beta)`` as floats when 0 < alpha < beta < 1, else the worded error; warn when
    alpha >= 1/2 (the analysis, and unit steps near the solution, need alpha < 1/2)."""
    alpha = check_real("alpha", owner, alpha, low=0, high=1, low_open=True, high_open=True)
    beta = check_real("beta", owner, beta, low=alpha, high=1, low_open=True, high_open=True)
    if alpha >= 0.5:
        warnings.warn(
            f"alpha = {alpha} >= 1/2: unit steps may be rejected near the solution, and the "
            "convergence theory does not apply.",
            stacklevel=3,
        )
    return alpha, beta


def check_wolfe(
    phi0: float,
    dphi0: float,
    phi_eta: float,
    dphi_eta: float,
    eta: float,
    alpha: float,
    beta: float,
) -> bool:
    """Whether step ``eta`` satisfies both weak-Wolfe inequalities.

    ``phi_eta`` may be ``inf`` (a step outside the domain: Armijo fails); any other NaN or inf is
    refused (ValueError), as are constants outside 0 < alpha < beta < 1.

    >>> check_wolfe(0.0, -1.0, -0.5, -0.05, 1.0, 0.1, 0.9)
    True
    """
    owner = "check_wolfe"
    phi0 = check_real("phi0", owner, phi0)
    dphi0 = check_real("dphi0", owner, dphi0)
    phi_eta = check_real("phi_eta", owner, phi_eta, finite=False)
    dphi_eta = check_real("dphi_eta", owner, dphi_eta)
    eta = check_real("eta", owner, eta, low=0, low_open=True)
    alpha, beta = check_wolfe_constants(owner, alpha, beta)
    armijo = phi_eta <= phi0 + alpha * eta * dphi0
    curvature = dphi_eta >= beta * dphi0
    return bool(armijo and curvature)


def weak_wolfe_search(
    phi: Callable[[float], float],
    dphi: Callable[[float], float],
    alpha: float = 0.1,
    beta: float = 0.9,
    eta0: float = 1.0,
    max_trials: int = 100,
    *,
    phi0: float | None = None,
    dphi0: float | None = None,
) -> tuple[float, int]:
    r"""Find a weak-Wolfe step for :math:`\phi` by log-bisection; return ``(eta, n_trials)``.

    Args:
        phi, dphi: :math:`\phi(\eta)` and :math:`\phi'(\eta)`.
        alpha, beta: the Armijo and curvature constants, :math:`0<\alpha<\beta<1`.
        eta0: the first trial step (1 for quasi-Newton methods).
        max_trials: trials before giving up.
        phi0, dphi0: :math:`\phi(0)` and :math:`\phi'(0)` when already known (saves two
            evaluations).

    Raises:
        LineSearchError: :math:`\phi'(0)\ge 0` (not a descent direction), :math:`\phi'` not
            finite at a trial step, or no admissible step within ``max_trials`` trials.

    NaN and inf: ``phi0`` and ``dphi0`` (given or computed) must be finite (ValueError naming
    them); a trial where :math:`\phi` is NaN or inf counts as leaving the domain (the step
    shrinks).

    >>> weak_wolfe_search(lambda t: t * t / 2 - t, lambda t: t - 1)  # the unit step is admissible
    (1.0, 1)
    """
    owner = "weak_wolfe_search"
    check_callable("phi", owner, phi)
    check_callable("dphi", owner, dphi)
    alpha, beta = check_wolfe_constants(owner, alpha, beta)
    eta0 = check_real("eta0", owner, eta0, low=0, low_open=True)
    max_trials = check_int("max_trials", owner, max_trials, low=1)
    phi0 = check_real("phi0", owner, phi(0.0) if phi0 is None else phi0)
    dphi0 = check_real("dphi0", owner, dphi(0.0) if dphi0 is None else dphi0)
    if not dphi0 < 0:
        raise LineSearchError(f"Not a descent direction: phi'(0) = {dphi0:.3g} >= 0.")
    lo, hi, eta = 0.0, math.inf, eta0
    for trial in range(1, max_trials + 1):
        value = phi(eta)
        if not (math.isfinite(value) and value <= phi0 + alpha * eta * dphi0):
            hi = eta  # Armijo fails (or the step leaves the domain): shrink
        else:
            slope = dphi(eta)
            if not math.isfinite(slope):
                raise LineSearchError(f"phi'({eta:.3g}) = {slope} is not finite.")
            if slope < beta * dphi0:
                lo = eta  # curvature fails: the step is too short
            else:
                return eta, trial
        if hi == math.inf:
            eta = 2.0 * eta
        elif lo == 0.0:
            eta = eta / 2.0
        else:
            eta = math.sqrt(lo * hi)
    raise LineSearchError(
        f"No weak-Wolfe step within {max_trials} trials (bracket [{lo:.3g}, {hi:.3g}])."
    )
