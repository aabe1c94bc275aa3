"""Surrogate-ERM estimators for realizable-statistic models (paper, Sec. 4-5).

Each fits :math:`\\hat g(x)=\\lambda(\\hat W^\\top x+\\hat b)` by surrogate ERM
(:func:`rsmlearn.erm.fit_linear`) and predicts with the Bayes decision of the target loss on the
estimated statistic. NaN and inf in the features are refused (ValueError naming the argument).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from paperkit import check_choice
from rsmlearn import _checks
from rsmlearn.erm import fit_linear
from rsmlearn.losses import BINARY, MULTICLASS, Loss

__all__ = ["MulticlassRSM", "MultilabelRSM", "RSMClassifier", "project_simplex"]


def project_simplex(V: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row of ``V`` onto the probability simplex (sort-based).
    NaN and inf are refused.

    >>> project_simplex(np.array([[0.7, 0.7, -0.2]]))
    array([[0.5, 0.5, 0. ]])
    """
    V = _checks.check_array("V", "project_simplex", V, ndim=2, kind="real")
    V = V.astype(float)
    srt = -np.sort(-V, axis=1)
    css = np.cumsum(srt, axis=1) - 1.0
    idx = np.arange(1, V.shape[1] + 1)
    rho = (srt - css / idx > 0).sum(axis=1)
    theta = css[np.arange(len(V)), rho - 1] / rho
    return np.maximum(V - theta[:, None], 0.0)


class _LinearRSM(BaseEstimator):
    """Shared fit machinery: hyperparameters, checks, the solver call."""

    _losses: dict[str, Loss] = {}

    def _loss(self) -> Loss:
        name = type(self).__name__
        check_choice("loss", name, self.loss, list(self._losses))
        _checks.hyper(self, name)
        return self._losses[self.loss]

    def _solve(self, loss: Loss, X: np.ndarray, y: np.ndarray, s: int) -> None:
        W, b, n_iter, ok = fit_linear(
            loss,
            X,
            y,
            s,
            fit_intercept=self.fit_intercept,
            ridge=self.ridge,
            norm_bound=self.norm_bound,
            max_iter=self.max_iter,
            tol=self.tol,
            solver=self.solver,
        )
        self.coef_, self.intercept_, self.n_iter_, self.converged_ = W.T, b, n_iter, ok
        self.n_features_in_ = X.shape[1]

    def decision_function(self, X: Any) -> np.ndarray:
        """The scores :math:`u=\\hat Wx+\\hat b`."""
        _checks.fitted(self)
        X = _checks.features("X", type(self).__name__, X, self.n_features_in_)
        U = X @ self.coef_.T + self.intercept_
        return U[:, 0] if self.coef_.shape[0] == 1 and self._binary_output else U

    _binary_output = False


class RSMClassifier(ClassifierMixin, _LinearRSM):
    """Binary RSM learner: surrogate ERM for :math:`\\eta(x)=P(Y=1|x)=\\lambda(w^\\top x+b)`.

    ``loss``: ``"logistic"`` (λ = sigmoid, κ = 4), ``"exponential"`` (λ(u) = σ(2u), κ = 4) or
    ``"squared"`` (identity link, predictions clipped to [0, 1], κ = 2). ``predict`` is the Bayes
    decision :math:`1\\{\\hat\\eta>\\tfrac12\\}`. ``y`` must be in {0, 1}; NaN/inf refused.

    >>> from rsmlearn.datasets import make_sigmoid_linear
    >>> X, y, eta = make_sigmoid_linear(2000, 3, seed=0)
    >>> clf = RSMClassifier().fit(X, y)
    >>> bool(np.mean((clf.predict_statistic(X) - eta) ** 2) < 0.01)
    True
    """

    _losses = BINARY
    _binary_output = True

    def __init__(
        self,
        loss: str = "logistic",
        fit_intercept: bool = True,
        norm_bound: float | None = None,
        ridge: float = 1e-6,
        max_iter: int = 500,
        tol: float = 1e-10,
        solver: str = "auto",
    ) -> None:
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.norm_bound = norm_bound
        self.ridge = ridge
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver

    def __sklearn_tags__(self):  # binary only: labels in {0, 1}
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X: Any, y: Any) -> RSMClassifier:
        """Surrogate ERM on ``X`` ``(n, d)`` and labels ``y`` ``(n,)`` in {0, 1}."""
        loss = self._loss()
        X = _checks.features("X", "RSMClassifier", X)
        y = _checks.labels("y", "RSMClassifier", y, X.shape[0], 2)
        self.classes_ = np.array([0, 1])
        self._solve(loss, X, y.astype(float), 1)
        return self

    def predict_statistic(self, X: Any) -> np.ndarray:
        """:math:`\\hat\\eta(x)=\\lambda(\\hat w^\\top x+\\hat b)` in [0, 1], shape ``(n,)``."""
        eta = BINARY[self.loss].link(self.decision_function(X))
        return np.clip(eta, 0.0, 1.0)

    def predict_proba(self, X: Any) -> np.ndarray:
        """``(n, 2)``: columns :math:`1-\\hat\\eta` and :math:`\\hat\\eta`."""
        eta = self.predict_statistic(X)
        return np.column_stack([1 - eta, eta])

    def predict(self, X: Any) -> np.ndarray:
        """Bayes decision :math:`1\\{\\hat\\eta>\\tfrac12\\}`, shape ``(n,)``."""
        return (self.predict_statistic(X) > 0.5).astype(np.int64)


class MulticlassRSM(ClassifierMixin, _LinearRSM):
    """K-class RSM learner for :math:`p(x)=\\lambda(Wx+b)\\in\\Delta_K`.

    ``loss``: ``"softmax_ce"`` (λ = softmax, κ = 1) or ``"squared"`` (one-hot squared loss,
    identity link with the prediction projected onto the simplex, κ = 2). ``predict`` is
    :math:`\\arg\\max_k\\hat p_k`. ``y`` in {0, ..., K−1}, K = ``n_classes`` or max(y)+1.
    NaN/inf refused.
    """

    _losses = {"softmax_ce": MULTICLASS["softmax_ce"], "squared": MULTICLASS["multiclass_squared"]}

    def __init__(
        self,
        loss: str = "softmax_ce",
        n_classes: int | None = None,
        fit_intercept: bool = True,
        norm_bound: float | None = None,
        ridge: float = 1e-6,
        max_iter: int = 500,
        tol: float = 1e-10,
        solver: str = "auto",
    ) -> None:
        self.loss = loss
        self.n_classes = n_classes
        self.fit_intercept = fit_intercept
        self.norm_bound = norm_bound
        self.ridge = ridge
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver

    def fit(self, X: Any, y: Any) -> MulticlassRSM:
        """Surrogate ERM on ``X`` ``(n, d)`` and labels ``y`` ``(n,)``."""
        loss = self._loss()
        X = _checks.features("X", "MulticlassRSM", X)
        K = self.n_classes
        if K is not None:
            K = _checks.check_int("n_classes", "MulticlassRSM", K, low=2, high=10_000)
        y = _checks.labels("y", "MulticlassRSM", y, X.shape[0], K or 10_000)
        K = K or max(int(y.max()) + 1, 2)
        self.classes_ = np.arange(K)
        self._solve(loss, X, y, K)
        return self

    def predict_statistic(self, X: Any) -> np.ndarray:
        """:math:`\\hat p(x)\\in\\Delta_K`, shape ``(n, K)``."""
        U = self.decision_function(X)
        if self.loss == "softmax_ce":
            return MULTICLASS["softmax_ce"].link(U)
        return project_simplex(U)

    predict_proba = predict_statistic

    def predict(self, X: Any) -> np.ndarray:
        """Bayes decision for the 0-1 loss: :math:`\\arg\\max_k\\hat p_k(x)`."""
        return np.argmax(self.predict_statistic(X), axis=1)


class MultilabelRSM(_LinearRSM):
    """L-label RSM learner for the marginals :math:`\\mu_j(x)=P(Y_j=1|x)=\\sigma(w_j^\\top x+b_j)`
    by binary-relevance logistic ERM (κ = 4). ``predict`` thresholds each marginal at ½, the Bayes
    decision for the Hamming loss. ``Y`` ``(n, L)`` in {0, 1}; NaN/inf refused.
    """

    _losses = {"logistic": BINARY["logistic"]}

    def __init__(
        self,
        loss: str = "logistic",
        fit_intercept: bool = True,
        norm_bound: float | None = None,
        ridge: float = 1e-6,
        max_iter: int = 500,
        tol: float = 1e-10,
        solver: str = "auto",
    ) -> None:
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.norm_bound = norm_bound
        self.ridge = ridge
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver

    def fit(self, X: Any, Y: Any) -> MultilabelRSM:
        """Surrogate ERM on ``X`` ``(n, d)`` and ``Y`` ``(n, L)`` in {0, 1}."""
        loss = self._loss()
        X = _checks.features("X", "MultilabelRSM", X)
        Y = _checks.labels("Y", "MultilabelRSM", Y, X.shape[0], 2, ndim=2)
        self._solve(loss, X, Y.astype(float), Y.shape[1])
        return self

    def predict_statistic(self, X: Any) -> np.ndarray:
        """The estimated marginals, shape ``(n, L)``."""
        return BINARY["logistic"].link(self.decision_function(X))

    def predict(self, X: Any) -> np.ndarray:
        """Hamming-Bayes decision: :math:`1\\{\\hat\\mu_j>\\tfrac12\\}`, shape ``(n, L)``."""
        return (self.predict_statistic(X) > 0.5).astype(np.int64)
