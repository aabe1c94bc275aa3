"""``MIFPO``: the fairness-performance Pareto front of fair representations (the paper's MIFPO).

For every fairness level gamma in a grid, the least loss E(gamma) that any classifier can reach on
any representation Z with TV(Z | A = 1, Z | A = 0) <= gamma, computed from the calibrated scores
alone (no representation is trained):

1. bin the calibrated scores of each group (:func:`fairpareto.bin_scores`);
2. solve the MIFPO program at every gamma (:func:`fairpareto.program.solve_mifpo`, DCCP), or the
   exact LP for the error (``solver="lp"``, :mod:`fairpareto.lp`);
3. take the cumulative minimum and the lower convex envelope over gamma
   (:mod:`fairpareto.front`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from fairpareto.binning import BINNINGS, GroupBins, bin_scores
from fairpareto.checks import (
    check_gammas,
    check_groups,
    check_scores_groups,
    check_unit,
    check_weights,
)
from fairpareto.front import cumulative_min, lower_convex_envelope
from fairpareto.lp import lp_error
from fairpareto.performance import PERFORMANCES
from fairpareto.program import Plan, solve_mifpo
from paperkit import check_array, check_choice, check_int, check_real, param_error

__all__ = ["MIFPO", "default_score_model"]

#: The solvers: DCCP on the MIFPO program, or the exact LP (error only).
SOLVERS = ("dccp", "lp")
#: Most representation points k n m one program may hold (a bound on memory and time).
MAX_POINTS = 200_000


def default_score_model(cv: int = 5) -> Any:
    """HistGradientBoostingClassifier wrapped in isotonic ``CalibratedClassifierCV`` (``cv`` folds):
    the calibrated scorer fitted per group (the official code uses a calibrated XGBoost)."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import HistGradientBoostingClassifier

    return CalibratedClassifierCV(
        HistGradientBoostingClassifier(random_state=0), method="isotonic", cv=cv
    )


class MIFPO:
    """Model-Independent Fairness-Performance Optimization: the optimal front E(gamma).

    Args:
        performance: the loss h of the posterior: ``"error"`` (min(p, 1 - p); accuracy = 1 - E),
            ``"log_loss"``, ``"brier"`` (p (1 - p)), or a callable ``(pi, q) -> cvxpy
            expression``, the summed perspective sum_z q_z h(pi_z / q_z), DCP-concave.
        n_bins: bins per group (>= 2; ignored by ``"exact"``). Default 10, as the official code.
        binning: ``"uniform"`` (equal width), ``"quantile"`` (equal frequency) or ``"exact"``.
        k: representation points per pair of bins (>= 1; default 2).
        gammas: ``(G,)`` fairness levels in [0, 1] (sorted, duplicates dropped).
            Default ``linspace(0, 1, 21)``.
        solver: ``"dccp"`` (the MIFPO program) or ``"lp"`` (the exact LP; error only).
        n_restarts: random initialisations of DCCP per gamma (>= 1; default 3).
        random_state: seed of DCCP's initialisations (>= 0).

    Attributes (after ``fit``):
        bins_: the :class:`fairpareto.GroupBins` the front was computed from.
        gammas_: ``(G,)`` the levels.
        raw_values_: ``(G,)`` E(gamma) recomputed from each solved plan (NaN where no feasible
            plan was found).
        values_: ``(G,)`` the front after the cumulative minimum and lower convex envelope.
        accuracy_: ``(G,)`` 1 - values_ (error only; None otherwise).
        plans_: the :class:`fairpareto.program.Plan` per gamma (DCCP only).
        solve_seconds_: wall time of the solves.
        solve_cpu_seconds_: CPU time of the solves (``time.process_time``: every thread of the
            process; unlike the wall time, not inflated by other processes on the machine).

    NaN policy: NaN or inf scores, groups, weights or gammas are refused (ValueError).

    >>> rng = np.random.default_rng(0)
    >>> A = rng.integers(0, 2, 400); scores = rng.beta(2 + 2 * A, 3)
    >>> mf = MIFPO(n_bins=4, gammas=[0.0, 0.5, 1.0], solver="lp").fit(scores, A)
    >>> bool(np.all(np.diff(mf.accuracy_) >= 0))
    True
    """

    def __init__(
        self,
        performance: str | Callable[..., Any] = "error",
        n_bins: int = 10,
        binning: str = "uniform",
        k: int = 2,
        gammas: Any = None,
        solver: str = "dccp",
        n_restarts: int = 3,
        random_state: int = 0,
    ) -> None:
        owner = "MIFPO"
        if isinstance(performance, str):
            check_choice("performance", owner, performance, PERFORMANCES)
        elif not callable(performance):
            raise param_error(
                "performance",
                owner,
                f"one of {PERFORMANCES} or a callable",
                repr(performance),
                cls=TypeError,
            )
        self.performance = performance
        self.n_bins = check_int("n_bins", owner, n_bins, low=2)
        self.binning = check_choice("binning", owner, binning, BINNINGS)
        self.k = check_int("k", owner, k, low=1)
        self.gammas = np.linspace(0.0, 1.0, 21) if gammas is None else check_gammas(owner, gammas)
        self.solver = check_choice("solver", owner, solver, SOLVERS)
        if solver == "lp" and performance != "error":
            raise param_error(
                "solver",
                owner,
                "'dccp' unless performance='error' (the LP is the error front)",
                solver,
            )
        self.n_restarts = check_int("n_restarts", owner, n_restarts, low=1)
        self.random_state = check_int("random_state", owner, random_state, low=0)

    # fitting -------------------------------------------------------------------------------
    def fit(self, scores: Any, A: Any, sample_weight: Any = None) -> MIFPO:
        """Bin the calibrated ``scores`` ``(N,)`` in [0, 1] of the groups ``A`` ``(N,)`` in
        {0, 1} (optionally weighted by ``sample_weight`` ``(N,)`` >= 0) and compute the front."""
        owner = "MIFPO.fit"
        scores, A = check_scores_groups(owner, scores, A)
        weight = check_weights(owner, sample_weight, A)
        return self._fit_bins(bin_scores(scores, A, self.n_bins, self.binning, weight))

    def fit_bins(self, u: Any, U: Any, v: Any, V: Any, alpha: float) -> MIFPO:
        """Compute the front from already binned scores: levels ``u`` ``(n,)`` with masses ``U``
        ``(n,)`` for group 1, ``v`` ``(m,)`` with ``V`` ``(m,)`` for group 0 (levels in [0, 1],
        masses >= 0, renormalised to sum 1), and alpha = P(A = 1) in (0, 1)."""
        owner = "MIFPO.fit_bins"
        u, v = check_unit("u", owner, u), check_unit("v", owner, v)
        masses = []
        for name, mass, level in (("U", U, u), ("V", V, v)):
            mass = check_array(name, owner, mass, ndim=1).astype(float)
            if mass.shape != level.shape or mass.min() < 0 or mass.sum() <= 0:
                raise param_error(
                    name,
                    owner,
                    f"nonnegative, of shape {level.shape}, not all zero",
                    f"an array of shape {mass.shape}",
                )
            masses.append(mass / mass.sum())

        alpha = check_real("alpha", owner, alpha, low=0, high=1, low_open=True, high_open=True)
        return self._fit_bins(GroupBins(u, masses[0], v, masses[1], alpha))

    def fit_from_estimator(
        self, X: Any, y: Any, A: Any, estimator: Any = None, cv: int = 5
    ) -> MIFPO:
        """Fit one calibrated classifier per group on ``(X[A == a], y[A == a])``, score every row
        with its group's classifier and compute the front from these scores.

        ``X`` ``(N, d)``, ``y`` ``(N,)`` in {0, 1}, ``A`` ``(N,)`` in {0, 1}; ``estimator``: any
        scikit-learn classifier with ``predict_proba`` (cloned per group), default
        :func:`default_score_model` with ``cv`` isotonic-calibration folds. The fitted models are
        ``estimators_`` (score new rows with :meth:`predict_scores`). The scores are in-sample
        predictions; for a front on held-out rows, call :meth:`predict_scores` on them and
        :meth:`fit`.
        """
        from sklearn.base import clone

        owner = "MIFPO.fit_from_estimator"
        X = check_array("X", owner, X, ndim=2)
        A = check_groups(owner, A, X.shape[0])
        y = check_array("y", owner, y, ndim=1, kind=None)
        if y.shape[0] != X.shape[0] or not np.isin(y, (0, 1)).all():
            raise param_error("y", owner, f"0/1 labels of length {X.shape[0]}", "other values")
        y = y.astype(int)
        cv = check_int("cv", owner, cv, low=2)
        if estimator is None:
            estimator = default_score_model(cv)
        elif not hasattr(estimator, "predict_proba"):
            raise param_error(
                "estimator",
                owner,
                "a classifier with predict_proba",
                type(estimator).__name__,
                cls=TypeError,
            )
        self.n_features_in_ = X.shape[1]
        self.estimators_ = {}
        for a in (0, 1):
            rows = a == A
            if np.unique(y[rows]).size < 2:
                raise param_error("y", owner, f"holding both labels within group {a}", "one label")
            self.estimators_[a] = clone(estimator).fit(X[rows], y[rows])
        return self.fit(self.predict_scores(X, A), A)

    def predict_scores(self, X: Any, A: Any) -> np.ndarray:
        """P(Y = 1 | x, a) from the group's fitted classifier (after :meth:`fit_from_estimator`)."""
        owner = "MIFPO.predict_scores"
        if not hasattr(self, "estimators_"):
            raise param_error("X", owner, "scored after fit_from_estimator", "an unfitted MIFPO")
        X = check_array("X", owner, X, shape=(None, self.n_features_in_))
        A = check_groups(owner, A, X.shape[0])
        out = np.empty(X.shape[0])
        for a in (0, 1):
            rows = a == A
            out[rows] = self.estimators_[a].predict_proba(X[rows])[:, 1]
        return np.clip(out, 0.0, 1.0)

    def _fit_bins(self, bins: GroupBins) -> MIFPO:
        points = self.k * bins.n * bins.m
        if points > MAX_POINTS:
            raise param_error(
                "n_bins",
                "MIFPO",
                f"small enough that k n m <= {MAX_POINTS}",
                f"k={self.k}, n={bins.n}, m={bins.m}",
            )
        started, cpu_started = time.perf_counter(), time.process_time()
        self.bins_ = bins
        self.gammas_ = self.gammas.copy()
        if self.solver == "lp":
            self.plans_ = []
            self.raw_values_ = lp_error(bins, self.gammas_)
        else:
            self.plans_ = [self._solve(float(g)) for g in self.gammas_]
            self.raw_values_ = np.array([p.value for p in self.plans_])
        self.values_ = lower_convex_envelope(self.gammas_, cumulative_min(self.raw_values_))
        self.accuracy_ = 1.0 - self.values_ if self.performance == "error" else None
        self.solve_seconds_ = time.perf_counter() - started
        self.solve_cpu_seconds_ = time.process_time() - cpu_started
        return self

    def _solve(self, gamma: float) -> Plan:
        return solve_mifpo(
            self.bins_, gamma, self.performance, self.k, self.n_restarts, self.random_state
        )

    # results -------------------------------------------------------------------------------
    def representation(self, gamma: float) -> dict[str, Any]:
        """The optimal representation at ``gamma`` in [0, 1]: the transport plan of the fitted
        level equal to ``gamma`` (solved now with DCCP when it was not solved during ``fit``).

        Returns ``dict(R1=(k, n, m), R0=(k, m, n), bins=GroupBins, gamma, value, tv,
        feasible)``: R1[kappa, i, j] is the fraction of group-1 level i sent to the point
        (i, j, kappa), R0[kappa, j, i] the fraction of group-0 level j sent to it.
        """

        owner = "MIFPO.representation"
        if not hasattr(self, "bins_"):
            raise param_error("gamma", owner, "asked after fit", "an unfitted MIFPO")
        gamma = check_real("gamma", owner, gamma, low=0, high=1)
        match = [p for p in self.plans_ if abs(p.gamma - gamma) <= 1e-12]
        plan = match[0] if match else self._solve(gamma)
        return {
            "R1": plan.R1,
            "R0": plan.R0,
            "bins": self.bins_,
            "gamma": plan.gamma,
            "value": plan.value,
            "tv": plan.tv,
            "feasible": plan.feasible,
        }

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the front (accuracy for the error, else E) against gamma on ``ax`` (a new
        off-screen figure when None); returns the axes."""
        if not hasattr(self, "values_"):
            raise param_error("ax", "MIFPO.plot", "drawn after fit", "an unfitted MIFPO")
        if ax is None:
            from paperkit import figure

            _, ax = figure()
        y = self.accuracy_ if self.accuracy_ is not None else self.values_
        ax.plot(self.gammas_, y, marker="o", **{"label": "MIFPO front", **kwargs})
        ax.set_xlabel("statistical parity gamma (TV)")
        ax.set_ylabel(
            "accuracy"
            if self.accuracy_ is not None
            else f"E ({getattr(self.performance, '__name__', self.performance)})"
        )
        return ax
