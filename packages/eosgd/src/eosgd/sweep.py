r"""The regime diagram: what each run of a batch converged to, at which rate, against the paper's
predictions.

:func:`analyse_trajectory` reads a :class:`~eosgd.Trajectory` run by run; :func:`regime_sweep`
runs every (step size, start) pair of a grid as one vectorised batch and analyses it. Each row
compares the measured behaviour with the regime of its step size (:func:`classify_regime`):

========================  =====================================================================
behaviour                 what the run did (tolerances relative to max(1, |y|) and 1 + |w|)
========================  =====================================================================
``converged``             :math:`|r_T| \le 10^{-10}`: a minimiser (stable or subcritical)
``period-2``              :math:`\|w_T - w_{T-2}\| \le 10^{-9}` and :math:`|r_T - r_{T-1}| >
                          10^{-6}`: a period-two orbit (supercritical)
``oscillating``           neither: still oscillating at the last step (critical: for ever)
``diverged``              the residual passed the divergence bound
========================  =====================================================================

Rates, each beside its prediction:

* converged: ``rate`` fitted on :math:`|r_t|` where it decays from :math:`10^{-4}` to
  :math:`10^{-11}`, against ``rate_pred`` :math:`= \max_k |1 - \eta \lambda_k|` over the
  eigenvalues of :math:`J J^\top` at the limit (:math:`|1 - \eta S_\infty|` for a scalar output);
* period-2: ``rate`` fitted on the defect :math:`\|w_t - w_{t-2}\|` over the same decades,
  against ``rate_pred`` :math:`=` :func:`period_two_rate` at the last point;
* critical: power-law exponents over the last ``decades`` decades of the run,
  :math:`t \in [T 10^{-\text{decades}}, T]` (default the last one), of :math:`|r_t|` (``exp_r``,
  predicted :math:`-1/2`), the loss (``exp_loss``, :math:`-1`), :math:`\operatorname{dist}(\pi(w_t),
  w^*)` (``exp_dist``, :math:`-1/2`) and :math:`S(\pi(w_t)) - S^*` (``exp_S``, :math:`-1`).

Entries that do not apply to a row are NaN (documented: "not applicable", never a failed
computation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eosgd import manifold
from eosgd.descent import Trajectory, gd
from eosgd.fits import fit_linear_rate, fit_power_law
from eosgd.problem import LeastSquaresProblem
from eosgd.regimes import classify_regime, critical_lr, period_two_rate
from paperkit import check_array, check_int, check_memory, check_real, describe, param_error

__all__ = ["COLUMNS", "analyse_trajectory", "regime_sweep"]

#: The columns of the table :func:`analyse_trajectory` returns, in order.
COLUMNS = (
    "eta",
    "eta_ratio",
    "regime",
    "S0",
    "stable_start",
    "behaviour",
    "diverged",
    "S_final",
    "S_star",
    "two_over_eta",
    "dist_final",
    "r_final",
    "r_max",
    "growth",
    "amplitude",
    "rate",
    "rate_pred",
    "exp_r",
    "exp_loss",
    "exp_dist",
    "exp_S",
)
#: Decades of a linear decay used for the rate fits (relative to the scale of r or w).
RATE_WINDOW = (1e-11, 1e-4)


def _norm(r: np.ndarray) -> np.ndarray:
    """:math:`|r|` per step and run: ``(T, n)`` from ``(T, n)`` or ``(T, n, q)``."""
    return np.abs(r) if r.ndim == 2 else np.linalg.norm(r, axis=-1)


def _window_rate(v: np.ndarray, scale: float) -> float:
    """Linear rate of the last decay of ``v`` through ``RATE_WINDOW`` (NaN: too few points)."""
    lo, hi = RATE_WINDOW[0] * scale, RATE_WINDOW[1] * scale
    above = np.flatnonzero(v > hi)
    start = above[-1] + 1 if len(above) else 0
    inside = np.flatnonzero(v[start:] > lo)
    if len(inside) < 10:
        return float("nan")
    stop = start + inside[-1] + 1
    t = np.arange(start, stop)
    return fit_linear_rate(t, v[start:stop])


def _critical_exponents(traj, absr, i, S_star, decades) -> dict[str, float]:
    T = len(absr)
    lo, hi = T / 10**decades, T - 1
    out = {k: float("nan") for k in ("exp_r", "exp_loss", "exp_dist", "exp_S")}
    if T < 1000:
        return out
    t = np.arange(T)
    idx = np.unique(np.geomspace(lo, hi, 400).astype(np.int64))
    if (absr[idx, i] > 0).all():
        out["exp_r"] = fit_power_law(t[idx], absr[idx, i], lo, hi)[0]
        out["exp_loss"] = fit_power_law(t[idx], traj.loss[idx, i], lo, hi)[0]
    if traj.S_proj is not None:
        rec = (traj.t_rec >= lo) & (traj.t_rec <= hi)
        dist = traj.dist_to_wstar[rec, i]
        gap = traj.S_proj[rec, i] - S_star
        if rec.sum() >= 5 and (dist > 0).all():
            out["exp_dist"] = fit_power_law(traj.t_rec[rec], dist)[0]
        if rec.sum() >= 5 and (gap > 0).all():
            out["exp_S"] = fit_power_law(traj.t_rec[rec], gap)[0]
    return out


def _as_batch(traj: Trajectory) -> Trajectory:
    """A single-run trajectory with its run axis restored."""
    if np.ndim(traj.eta) == 1:
        return traj
    fields = {}
    for key, value in traj.__dict__.items():
        if (
            key in ("r", "loss", "D", "defect", "w", "S_proj", "dist_to_wstar")
            and value is not None
        ):
            value = value[:, None]
        elif key in ("eta", "diverged", "diverged_at"):
            value = np.array([value])
        fields[key] = value
    return Trajectory(**fields)


def analyse_trajectory(
    problem: LeastSquaresProblem, trajectory: Trajectory, decades: float = 1.0
) -> dict[str, np.ndarray]:
    """The regime-diagram table of a run or batch: one row per run, the columns of
    :data:`COLUMNS` (see the module docstring), as a dict of ``(n,)`` arrays
    (``pandas.DataFrame(table)`` makes a data frame of it).

    ``trajectory`` must come from :func:`gd` on ``problem`` with ``project=True``; ``decades``
    sets the window of the critical exponents (the power law is asymptotic: the last decade of a
    long run estimates it best).

    NaN policy: entries that do not apply to a row are NaN; the inputs hold no NaN (they come
    from :func:`gd`).
    """
    owner = "analyse_trajectory"
    if not isinstance(problem, LeastSquaresProblem):
        raise param_error(
            "problem", owner, "a LeastSquaresProblem", describe(problem), cls=TypeError
        )
    if not isinstance(trajectory, Trajectory):
        raise param_error(
            "trajectory", owner, "an eosgd.Trajectory", describe(trajectory), cls=TypeError
        )
    if trajectory.problem != problem.name or trajectory.w.shape[-1] != problem.dim:
        raise param_error(
            "problem",
            owner,
            f"the problem the trajectory ran on ({trajectory.problem})",
            problem.name,
        )
    if trajectory.S_proj is None:
        raise param_error("trajectory", owner, "run with project=True", "project=False")
    decades = check_real("decades", owner, decades, low=0, low_open=True, high=20)
    traj = _as_batch(trajectory)
    S_star = problem.min_sharpness()[0]
    eta_c = critical_lr(problem)
    ys = max(1.0, float(np.abs(problem._y).max()))
    absr = _norm(traj.r)
    n = absr.shape[1]
    rows: list[dict[str, Any]] = []
    for i in range(n):
        eta = float(traj.eta[i])
        w_T = traj.w[-1, i]
        wscale = 1.0 + float(np.linalg.norm(w_T))
        row: dict[str, Any] = {k: float("nan") for k in COLUMNS}
        row.update(
            eta=eta,
            eta_ratio=eta / eta_c,
            regime=classify_regime(problem, eta),
            S0=float(traj.S_proj[0, i]),
            stable_start=bool(eta * traj.S_proj[0, i] < 2.0),
            diverged=bool(traj.diverged[i]),
            S_final=float(traj.S_proj[-1, i]),
            S_star=S_star,
            two_over_eta=2.0 / eta,
            dist_final=float(traj.dist_to_wstar[-1, i]),
            r_final=float(absr[-1, i]),
            r_max=float(absr[:, i].max()),
            growth=float(absr[:, i].max() / max(absr[0, i], 1e-300)),
        )
        jump = absr.shape[0] >= 2 and _norm(traj.r[-1:, i : i + 1] - traj.r[-2:-1, i : i + 1])[0, 0]
        if row["diverged"]:
            row.update(behaviour="diverged", S_final=float("nan"), dist_final=float("nan"))
        elif absr[-1, i] <= 1e-10 * ys:
            row["behaviour"] = "converged"
            row["rate"] = _window_rate(absr[:, i], ys)
            lam = np.linalg.eigvalsh(manifold.gram(problem._J(w_T[None])))[0]
            row["rate_pred"] = float(np.abs(1.0 - eta * lam).max())
        elif traj.defect[-1, i] <= 1e-9 * wscale and jump > 1e-6 * ys:
            row["behaviour"] = "period-2"
            row["amplitude"] = float(jump) / 2
            row["rate"] = _window_rate(traj.defect[:, i], wscale)
            row["rate_pred"] = period_two_rate(problem, eta, w_T)
        else:
            row["behaviour"] = "oscillating"
        if row["regime"] == "critical" and not row["diverged"]:
            row.update(_critical_exponents(traj, absr, i, S_star, decades))
        rows.append(row)
    return {k: np.array([row[k] for row in rows]) for k in COLUMNS}


def regime_sweep(
    problem: LeastSquaresProblem,
    etas: np.ndarray,
    w0s: np.ndarray,
    steps: int = 20_000,
    record_every: int | str = "log",
    decades: float = 1.0,
) -> dict[str, np.ndarray]:
    """Run GD for every (step size, start) pair, ``len(etas) * len(w0s)`` runs in one vectorised
    batch (step-size major), and return :func:`analyse_trajectory`'s table with a ``start``
    column (the index into ``w0s``); ``decades`` as there.

    NaN policy: NaN or inf in ``etas`` or ``w0s`` is refused.

    >>> from eosgd import manifold_start
    >>> prob = LeastSquaresProblem.factorization()
    >>> w0 = manifold_start(prob, np.array([2.2, 2.6]))
    >>> table = regime_sweep(prob, np.array([0.8, 1.1]), w0, steps=4000)
    >>> table["behaviour"].tolist()
    ['converged', 'converged', 'period-2', 'period-2']
    """
    owner = "regime_sweep"
    if not isinstance(problem, LeastSquaresProblem):
        raise param_error(
            "problem", owner, "a LeastSquaresProblem", describe(problem), cls=TypeError
        )
    etas = check_array("etas", owner, etas, ndim=1).astype(float)
    if not (etas > 0).all():
        raise param_error("etas", owner, "positive step sizes", describe(etas))
    w0s = check_array("w0s", owner, w0s, ndim=(1, 2)).astype(float)
    w0s = np.atleast_2d(w0s)
    if w0s.shape[-1] != problem.dim:
        raise param_error("w0s", owner, f"of shape (m, {problem.dim})", describe(w0s))
    steps = check_int("steps", owner, steps, low=1)
    decades = check_real("decades", owner, decades, low=0, low_open=True, high=20)
    n = len(etas) * len(w0s)
    check_memory("steps", owner, steps, 8.0 * n * (steps + 1) * (problem.n_outputs + 6))
    W = np.tile(w0s, (len(etas), 1))
    E = np.repeat(etas, len(w0s))
    traj = gd(problem, W, E, steps, record_every)
    table = analyse_trajectory(problem, traj, decades)
    return {"start": np.tile(np.arange(len(w0s)), len(etas)), **table}
