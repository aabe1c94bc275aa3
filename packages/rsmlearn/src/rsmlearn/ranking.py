"""Subset ranking with NDCG (paper, Sec. 5.4; low-rank decomposition of Ramaswamy, Agarwal &
Tewari 2013).

Gain :math:`G(r)=2^r-1`, discount :math:`D(k)=1/\\log_2(1+k)`,
normaliser :math:`z(r)=\\max_\\pi\\mathrm{DCG}(\\pi,r)`, NDCG := 0 when z(r) = 0. Since
:math:`\\mathbb E[\\mathrm{NDCG}(\\pi)|x]=\\sum_j T_j(x)D(\\pi(j))` with the *normalised*
expected gains
:math:`T_j=\\mathbb E[G(r_j)/z(r)|x]`, sorting by T is NDCG-Bayes-optimal; the surrogate is squared
regression of :math:`G(r_j)/z(r)` on :math:`u_j=w^\\top x_{q,j}+b` (identity link, κ = 2).
Ranking arrays: ``Xq`` ``(n_q, L, d)`` finite, ``R`` ``(n_q, L)`` integers ≥ 0; NaN/inf refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from paperkit import check_array, check_choice, check_int, check_real, param_error
from rsmlearn import _checks
from rsmlearn.erm import fit_linear
from rsmlearn.losses import BINARY

__all__ = [
    "PairwiseHingeRanker",
    "SubsetRankingRSM",
    "discounts",
    "ndcg_per_query",
    "normalised_gains",
]


def discounts(L: int) -> np.ndarray:
    """:math:`D(k)=1/\\log_2(1+k)` for positions k = 1..L.

    >>> discounts(2).round(4)
    array([1.    , 0.6309])
    """
    L = check_int("L", "discounts", L, low=1, high=10**6)
    return 1.0 / np.log2(1.0 + np.arange(1, L + 1))


def _relevances(name: str, owner: str, R: Any) -> np.ndarray:
    R = check_array(name, owner, R, ndim=2, kind="real")
    if R.dtype.kind == "f" and not np.all(np.round(R) == R):
        raise param_error(name, owner, "integer relevance grades", "non-integer values")
    if R.min() < 0 or R.max() > 30:
        raise param_error(name, owner, "relevance grades in {0, ..., 30}", "other values")
    return R.astype(np.int64)


def normalised_gains(R: Any) -> np.ndarray:
    """:math:`G(r_j)/z(r)` per query (0 when z(r) = 0), shape ``(n_q, L)``.

    >>> normalised_gains(np.array([[2, 0]]))
    array([[1., 0.]])
    """
    R = _relevances("R", "normalised_gains", R)
    G = 2.0**R - 1.0
    z = (-np.sort(-G, axis=1) * discounts(R.shape[1])).sum(axis=1, keepdims=True)
    return np.divide(G, z, out=np.zeros_like(G), where=z > 0)


def ndcg_per_query(scores: Any, R: Any) -> np.ndarray:
    """NDCG@L of the ranking that sorts each query's documents by decreasing ``scores``
    (ties broken by document index), shape ``(n_q,)``."""
    S = check_array("scores", "ndcg_per_query", scores, ndim=2, kind="real")
    R = _relevances("R", "ndcg_per_query", R)
    if S.shape != R.shape:
        raise ValueError(
            f"The 'scores' and 'R' parameters of ndcg_per_query must have the same shape; got "
            f"{S.shape} and {R.shape}."
        )
    order = np.argsort(-S, axis=1, kind="stable")
    gains = np.take_along_axis(normalised_gains(R), order, axis=1)
    return (gains * discounts(R.shape[1])).sum(axis=1)


def _queries(owner: str, Xq: Any, R: Any | None = None, d: int | None = None):
    Xq = check_array("Xq", owner, Xq, ndim=3, kind="real")
    if Xq.shape[1] == 0 or Xq.shape[2] == 0:
        raise param_error("Xq", owner, "at least one document and one feature", f"{Xq.shape}")
    if d is not None and Xq.shape[2] != d:
        raise param_error("Xq", owner, f"{d} features, as in fit", Xq.shape[2])
    if R is None:
        return Xq.astype(float), None
    R = _relevances("R", owner, R)
    if R.shape != Xq.shape[:2]:
        raise param_error("R", owner, f"shape {Xq.shape[:2]} (queries, documents)", f"{R.shape}")
    return Xq.astype(float), R


class SubsetRankingRSM(BaseEstimator):
    """NDCG-consistent subset ranking by squared-surrogate ERM on the normalised gains
    :math:`G(r_j)/z(r)` (identity link, κ = 2); ``predict_scores`` gives
    :math:`\\hat T_j=\\hat w^\\top x_{q,j}+\\hat b`, ranked by sorting.

    >>> from rsmlearn.datasets import make_subset_ranking
    >>> Xq, R, T = make_subset_ranking(2000, L=4, d=3, seed=0)
    >>> rk = SubsetRankingRSM().fit(Xq, R)
    >>> bool(np.mean((rk.predict_scores(Xq) - T) ** 2) < 1e-3)
    True
    """

    def __init__(
        self,
        loss: str = "squared",
        gain: str = "exp2",
        fit_intercept: bool = True,
        norm_bound: float | None = None,
        ridge: float = 1e-6,
        max_iter: int = 500,
        tol: float = 1e-10,
        solver: str = "auto",
    ) -> None:
        self.loss = loss
        self.gain = gain
        self.fit_intercept = fit_intercept
        self.norm_bound = norm_bound
        self.ridge = ridge
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver

    def fit(self, Xq: Any, R: Any) -> SubsetRankingRSM:
        """ERM of :math:`\\frac1{n_q}\\sum_q\\sum_j(u_{q,j}-G(r_{q,j})/z(r_q))^2`."""
        check_choice("loss", "SubsetRankingRSM", self.loss, ["squared"])
        check_choice("gain", "SubsetRankingRSM", self.gain, ["exp2"])
        _checks.hyper(self, "SubsetRankingRSM")
        Xq, R = _queries("SubsetRankingRSM", Xq, R)
        n_q, L, d = Xq.shape
        t = normalised_gains(R).ravel()
        W, b, n_iter, ok = fit_linear(
            BINARY["squared"],
            Xq.reshape(n_q * L, d),
            t,
            1,
            fit_intercept=self.fit_intercept,
            ridge=self.ridge / L,  # per document: the same penalty per query
            norm_bound=self.norm_bound,
            max_iter=self.max_iter,
            tol=self.tol,
            solver=self.solver,
        )
        self.coef_, self.intercept_, self.n_iter_, self.converged_ = (
            W[:, 0],
            float(b[0]),
            n_iter,
            ok,
        )
        self.n_features_in_ = d
        return self

    def predict_scores(self, Xq: Any) -> np.ndarray:
        """Estimated normalised gains :math:`\\hat T_{q,j}`, shape ``(n_q, L)``."""
        _checks.fitted(self)
        Xq, _ = _queries("SubsetRankingRSM", Xq, d=self.n_features_in_)
        return Xq @ self.coef_ + self.intercept_

    def ndcg(self, Xq: Any, R: Any) -> float:
        """Mean NDCG@L of ranking by the predicted scores."""
        _checks.fitted(self)
        Xq, R = _queries("SubsetRankingRSM", Xq, R, d=self.n_features_in_)
        return float(ndcg_per_query(self.predict_scores(Xq), R).mean())


class PairwiseHingeRanker(BaseEstimator):
    """RankSVM-style baseline: subgradient descent on
    :math:`\\frac1{|P|}\\sum_{(q,i,j):r_{qi}>r_{qj}}\\max(0,1-w^\\top(x_{qi}-x_{qj}))+\\frac\\alpha2
    \\lVert w\\rVert^2` with step :math:`\\eta_t=\\eta_0/\\sqrt t`, returning the averaged iterate.
    Not calibrated to any statistic (and not NDCG-consistent in general). NaN/inf refused."""

    def __init__(self, alpha: float = 1e-4, n_iter: int = 300, step: float = 1.0) -> None:
        self.alpha = alpha
        self.n_iter = n_iter
        self.step = step

    def fit(self, Xq: Any, R: Any) -> PairwiseHingeRanker:
        """Subgradient descent over all ordered pairs with different relevance."""
        check_real("alpha", "PairwiseHingeRanker", self.alpha, low=0)
        check_int("n_iter", "PairwiseHingeRanker", self.n_iter, low=1, high=_checks.MAX_ITER)
        check_real("step", "PairwiseHingeRanker", self.step, low=0, low_open=True)
        Xq, R = _queries("PairwiseHingeRanker", Xq, R)
        q, i, j = np.nonzero(R[:, :, None] > R[:, None, :])
        D = Xq[q, i] - Xq[q, j]
        w = np.zeros(Xq.shape[2])
        avg = np.zeros_like(w)
        for t in range(1, self.n_iter + 1):
            g = self.alpha * w
            if len(D):
                active = D @ w < 1.0
                g = g - D[active].sum(axis=0) / len(D)
            w = w - self.step / np.sqrt(t) * g
            avg += (w - avg) / t
        self.coef_, self.n_features_in_ = avg, Xq.shape[2]
        return self

    def predict_scores(self, Xq: Any) -> np.ndarray:
        """Scores :math:`w^\\top x_{q,j}`, shape ``(n_q, L)``."""
        _checks.fitted(self)
        Xq, _ = _queries("PairwiseHingeRanker", Xq, d=self.n_features_in_)
        return Xq @ self.coef_

    def ndcg(self, Xq: Any, R: Any) -> float:
        """Mean NDCG@L of ranking by the scores."""
        _checks.fitted(self)
        Xq, R = _queries("PairwiseHingeRanker", Xq, R, d=self.n_features_in_)
        return float(ndcg_per_query(self.predict_scores(Xq), R).mean())
