r"""Full-batch gradient descent :math:`w_{t+1} = w_t - \eta J(w_t)^\top (F(w_t) - y)` (for a
scalar output, :math:`w_{t+1} = w_t - \eta\, r_t \nabla f(w_t)`), in float64, vectorised over a
batch of starts and step sizes, with the diagnostics of the paper's analysis along the run: the
residual :math:`r_t` (the normal, 1-D bifurcating part of the dynamics), the loss, the imbalance
:math:`D_t` that only the oscillation changes, and, at recorded steps, the sharpness of the
projection :math:`S(\pi(w_t))` and its distance to the flattest minimisers (the tangential part,
Riemannian GD on the sharpness along :math:`M`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from eosgd import manifold
from eosgd.problem import LeastSquaresProblem
from paperkit import (
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_real,
    describe,
    param_error,
)

__all__ = ["DIVERGENCE_FACTOR", "LOG_RECORDS", "Trajectory", "gd", "record_steps"]

#: A run has diverged once a residual exceeds this factor times max(1, |y|, |r_0|).
DIVERGENCE_FACTOR = 1e8
#: About how many log-spaced steps ``record_every="log"`` records.
LOG_RECORDS = 200


@dataclass(frozen=True)
class Trajectory:
    r"""What :func:`gd` returns. For a batch of ``n`` runs every per-run array has a run axis
    (after the time axis); a single run (``w0`` of shape ``(p,)`` and a scalar ``eta``) has none.

    Attributes:
        problem: the problem's name.
        eta: the step sizes, ``(n,)`` (a float for a single run).
        t: the steps ``0 .. T-1`` of the dense records, ``(T,)``; ``T = steps + 1`` unless every
            run diverged earlier.
        r: the residual :math:`r_t = F(w_t) - y` at every step, ``(T, n)`` (``(T, n, q)`` for
            ``q`` outputs).
        loss: :math:`L(w_t)` at every step, ``(T, n)``.
        D: the imbalance :math:`D_t` at every step, ``(T, n, k)``, or None when the problem has
            none (:meth:`LeastSquaresProblem.imbalance`).
        defect: the period-two defect :math:`\|w_t - w_{t-2}\|` at every step (0 at
            :math:`t = 0`, :math:`\|w_1 - w_0\|` at :math:`t = 1`), ``(T, n)``: it tends to 0
            both at a fixed point and on a period-two orbit.
        t_rec: the recorded steps, ``(R,)``; always holds 0 and the last step.
        w: the parameters at the recorded steps, ``(R, n, p)``.
        S_proj: :math:`S(\pi(w_t))` at the recorded steps, ``(R, n)``, or None (``project=False``).
        dist_to_wstar: :math:`\operatorname{dist}(\pi(w_t), \arg\min_M S)` at the recorded
            steps, ``(R, n)``, or None.
        diverged: whether each run diverged, ``(n,)`` (a bool for a single run).
        diverged_at: the first step whose residual passed the divergence bound, -1 if none.
        projection_failures: recorded points whose projection did not converge (their
            ``S_proj`` and distance use the last iterate).

    NaN policy: no array holds NaN or inf. A run that diverges is frozen at its last state
    below the bound (:data:`DIVERGENCE_FACTOR`); its entries from ``diverged_at`` on repeat that
    state (``S_proj`` and the distance repeat their last value before it).
    """

    problem: str
    eta: np.ndarray | float
    t: np.ndarray
    r: np.ndarray
    loss: np.ndarray
    D: np.ndarray | None
    defect: np.ndarray
    t_rec: np.ndarray
    w: np.ndarray
    S_proj: np.ndarray | None
    dist_to_wstar: np.ndarray | None
    diverged: np.ndarray | bool
    diverged_at: np.ndarray | int
    projection_failures: int = 0

    @property
    def steps(self) -> int:
        """The last step run."""
        return int(self.t[-1])

    @property
    def final_w(self) -> np.ndarray:
        """The parameters at the last step, ``(n, p)`` (``(p,)`` for a single run)."""
        return self.w[-1]


def record_steps(steps: int, record_every: int | str) -> np.ndarray:
    """The recorded steps: every ``record_every``-th step, or ~:data:`LOG_RECORDS` log-spaced
    ones for ``"log"``; 0 and ``steps`` always included. Integer arguments: no NaN can arise.

    >>> record_steps(10, 4).tolist()
    [0, 4, 8, 10]
    >>> len(record_steps(10**5, "log")) <= 201
    True
    """
    owner = "record_steps"
    steps = check_int("steps", owner, steps, low=1)
    if isinstance(record_every, str):
        check_choice("record_every", owner, record_every, ("log",))
        grid = np.rint(np.geomspace(1, steps, LOG_RECORDS)).astype(np.int64)
    else:
        every = check_int("record_every", owner, record_every, low=1)
        check_memory("steps", owner, steps, 8.0 * (steps // every + 2))
        grid = np.arange(0, steps + 1, every, dtype=np.int64)
    return np.unique(np.concatenate([[0], grid, [steps]]))


def _step_sizes(eta: Any, n: int | None) -> np.ndarray:
    if isinstance(eta, numbers.Real) and not isinstance(eta, bool):
        value = check_real("eta", "gd", eta, low=0, low_open=True)
        return np.full(n or 1, value)
    etas = check_array("eta", "gd", eta, ndim=1).astype(float)
    if not (etas > 0).all():
        raise param_error("eta", "gd", "positive (every step size > 0)", describe(etas))
    if n is not None and len(etas) != n:
        raise param_error(
            "eta", "gd", f"a number or of shape ({n},) like w0's batch", describe(etas)
        )
    return etas


def gd(
    problem: LeastSquaresProblem,
    w0: np.ndarray,
    eta: float | np.ndarray,
    steps: int,
    record_every: int | str = 1,
    *,
    project: bool = True,
) -> Trajectory:
    r"""Run GD :math:`w_{t+1} = w_t - \eta J^\top (F(w_t) - y)` for ``steps`` steps.

    Args:
        problem: the :class:`LeastSquaresProblem`.
        w0: one start ``(p,)`` or a batch ``(n, p)``.
        eta: one step size, or one per run ``(n,)``. A single start with ``n`` step sizes runs
            that start ``n`` times; ``n`` starts with one step size run them all with it.
        steps: the number of steps.
        record_every: an integer ``k`` (record every ``k``-th step) or ``"log"`` (about 200
            log-spaced steps, for long runs: the Newton projection per record is the costly
            part). Residual, loss, imbalance and defect are recorded at *every* step.
        project: compute ``S_proj`` and ``dist_to_wstar`` at the recorded steps.

    The batch runs as one vectorised loop over an ``(n, p)`` array, float64 throughout.
    A run whose residual exceeds :data:`DIVERGENCE_FACTOR` x max(1, |y|, |r_0|) (or overflows)
    is reported ``diverged`` and frozen; the loop stops when every run has diverged.

    NaN policy: ``w0`` and ``eta`` with NaN or inf are refused; the outputs never hold NaN.
    Memory for the dense records (``8 (steps + 1) n (q + 2 + k)`` bytes) is checked first.

    >>> prob = LeastSquaresProblem.factorization()
    >>> run = gd(prob, np.array([1.2, 0.9]), eta=0.5, steps=200)
    >>> bool(abs(run.r[-1]) < 1e-12), bool(run.diverged)
    (True, False)
    >>> bool(gd(prob, np.array([3.0, 0.1]), eta=3.0, steps=100).diverged)
    True
    """
    owner = "gd"
    if not isinstance(problem, LeastSquaresProblem):
        raise param_error(
            "problem", owner, "a LeastSquaresProblem", describe(problem), cls=TypeError
        )
    w0 = check_array("w0", owner, w0, ndim=(1, 2)).astype(float)
    if w0.shape[-1] != problem.dim:
        raise param_error(
            "w0", owner, f"of shape ({problem.dim},) or (n, {problem.dim})", describe(w0)
        )
    single = w0.ndim == 1 and isinstance(eta, numbers.Real)
    etas = _step_sizes(eta, None if w0.ndim == 1 else len(w0))
    W = np.broadcast_to(w0, (len(etas), problem.dim)).copy() if w0.ndim == 1 else w0.copy()
    n = len(W)
    etas = np.broadcast_to(etas, (n,)).copy()
    steps = check_int("steps", owner, steps, low=1)
    if isinstance(record_every, str):
        check_choice("record_every", owner, record_every, ("log",))
        n_rec = LOG_RECORDS + 2
    else:
        n_rec = steps // check_int("record_every", owner, record_every, low=1) + 2
    project = check_bool("project", owner, project)
    q = problem.n_outputs
    k = problem._imbalance(np.ones((1, problem.dim))).shape[-1] if problem.has_imbalance else 0
    nbytes = 8.0 * ((steps + 1) * n * (q + 2 + k) + n_rec * n * (problem.dim + 2) * (1 + q))
    check_memory("steps", owner, steps, nbytes)
    rec = record_steps(steps, record_every)

    with np.errstate(over="ignore", invalid="ignore"):
        r0, _ = problem._resid_dir(W)
    r0 = r0.reshape(n, -1)
    if not np.isfinite(r0).all():
        raise param_error("w0", owner, "a start with a finite residual", describe(w0))
    bound = DIVERGENCE_FACTOR * np.maximum(
        max(1.0, float(np.abs(problem._y).max())), np.abs(r0).max(-1)
    )
    run = _loop(problem, W, etas, steps, rec, bound)
    return _finish(problem, run, etas, project, single)


def _loop(problem, W, etas, steps, rec, bound) -> dict[str, Any]:
    """The vectorised GD loop: dense records, the recorded parameters, divergence."""
    n, p = W.shape
    T = steps + 1
    scalar = problem._scalar
    r_all = np.empty((T, n) if scalar else (T, n, problem.n_outputs))
    imbalance = problem._imbalance
    D_all = np.empty((T, n, imbalance(np.ones((1, p))).shape[-1])) if imbalance else None
    defect2 = np.empty((T, n))
    w_rec = np.empty((len(rec) + 1, n, p))
    t_rec: list[int] = []
    is_rec = np.zeros(T, dtype=bool)
    is_rec[rec] = True
    eta_col = etas[:, None].copy()
    active = np.ones(n, dtype=bool)
    n_active = n
    diverged_at = np.full(n, -1, dtype=np.int64)
    resid_dir = problem._resid_dir
    w = w_prev = w_prev2 = W
    t = 0
    bound_min = bound.min()
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T):
            r, d = resid_dir(w)
            if not np.abs(r).max() <= bound_min:  # rare: check each run (NaN-safe)
                mag = np.abs(r) if scalar else np.abs(r).max(-1)
                newly = ~(mag <= bound) & active
                if newly.any():
                    diverged_at[newly] = t
                    active &= ~newly
                    n_active = int(active.sum())
                    eta_col[newly] = 0.0
                    w = np.where(newly[:, None], w_prev, w)  # freeze below the bound
                    r, d = resid_dir(w)
            r_all[t] = r
            if D_all is not None:
                D_all[t] = imbalance(w)
            gap = w - w_prev2
            defect2[t] = np.einsum("np,np->n", gap, gap)
            last = t == steps or n_active == 0
            if is_rec[t] or last:
                w_rec[len(t_rec)] = w
                t_rec.append(t)
            if last:
                break
            w_prev2, w_prev = w_prev, w
            w = w - eta_col * d
    T_end = t + 1
    return {
        "r": r_all[:T_end],
        "D": None if D_all is None else D_all[:T_end],
        "defect": np.sqrt(defect2[:T_end]),
        "t_rec": np.array(t_rec, dtype=np.int64),
        "w": w_rec[: len(t_rec)],
        "diverged_at": diverged_at,
        "T": T_end,
    }


def _finish(problem, run, etas, project, single) -> Trajectory:
    """Projections at the recorded steps (one batch), forward-filled after divergence."""
    r = run["r"]
    loss = 0.5 * r**2 if problem._scalar else 0.5 * (r**2).sum(-1)
    t_rec, w = run["t_rec"], run["w"]
    diverged_at = run["diverged_at"]
    diverged = diverged_at >= 0
    S_proj = dist = None
    failures = 0
    if project:
        R, n, p = w.shape
        live = ~diverged[None, :] | (t_rec[:, None] < diverged_at[None, :])
        S_proj = np.zeros((R, n))
        dist = np.zeros((R, n))
        x, ok = problem._project(w[live])
        failures = int((~ok).sum())
        S_proj[live] = manifold.gram_sharpness(problem._J(x))
        dist[live] = problem._dist(x)
        for j in range(1, R):  # repeat the last live value after divergence
            dead = ~live[j]
            S_proj[j, dead] = S_proj[j - 1, dead]
            dist[j, dead] = dist[j - 1, dead]
    out = dict(
        problem=problem.name,
        eta=etas,
        t=np.arange(run["T"]),
        r=r,
        loss=loss,
        D=run["D"],
        defect=run["defect"],
        t_rec=t_rec,
        w=w,
        S_proj=S_proj,
        dist_to_wstar=dist,
        diverged=diverged,
        diverged_at=diverged_at,
        projection_failures=failures,
    )
    if single:
        out = _squeeze(out)
    return Trajectory(**out)


def _squeeze(out: dict[str, Any]) -> dict[str, Any]:
    """Drop the run axis of a single run."""
    for key in ("r", "loss", "D", "defect", "w", "S_proj", "dist_to_wstar"):
        if out[key] is not None:
            out[key] = out[key][:, 0]
    out["eta"] = float(out["eta"][0])
    out["diverged"] = bool(out["diverged"][0])
    out["diverged_at"] = int(out["diverged_at"][0])
    return out
