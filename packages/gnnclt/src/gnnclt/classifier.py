"""A poly-GNN node classifier: multinomial logistic regression (cross-entropy) on the
embedding ``H = p(A) X``, optionally normalised by ``a_k nu_hat^k`` (``nu_hat`` = mean degree
of A, a data-driven degree scale). The paper's cross-entropy equivalence says training it is
asymptotically training on the limiting Gaussian mixture."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

from gnnclt._validate import check_k
from gnnclt.embedding import as_adjacency, check_coeffs, poly_gnn_embed
from paperkit import param_error
from paperkit.checks import check_array, check_choice, check_real, describe

__all__ = ["PolyGNNClassifier"]

_OWNER = "PolyGNNClassifier"


class PolyGNNClassifier(ClassifierMixin, BaseEstimator):
    """Logistic regression on the poly-GNN embedding of every node (transductive).

    Args:
        k: number of layers; the polynomial is ``A^k`` when ``coeffs`` is None.
        coeffs: ``(a_0, ..., a_k)`` with ``a_k != 0`` (overrides ``k``), or None.
        C: inverse L2 strength of :class:`sklearn.linear_model.LogisticRegression` (> 0).
        normalize: ``"nu"``: ``H / (a_k nu_hat^k)`` with ``nu_hat = nnz(A) / n``; ``"none"``:
            ``H`` as is (then the fit equals LogisticRegression on ``poly_gnn_embed``).

    NaN or inf in ``A`` or ``X`` raises ``ValueError``.

    >>> import numpy as np
    >>> from gnnclt import CSBMParams, sample_csbm
    >>> p = CSBMParams([0.5, 0.5], [[3.0, 1.0], [1.0, 3.0]], [[1.0], [-1.0]], [[1.0]])
    >>> A, X, z = sample_csbm(p, 2000, 20.0, seed=0)
    >>> mask = np.arange(2000) < 1000
    >>> clf = PolyGNNClassifier(k=2).fit(A, X, z, mask)
    >>> bool((clf.predict(A, X)[~mask] == z[~mask]).mean() > 0.9)
    True
    """

    def __init__(self, k: int = 2, coeffs: Any = None, C: float = 1.0, normalize: str = "nu"):
        self.k = k
        self.coeffs = coeffs
        self.C = C
        self.normalize = normalize

    def _coeffs(self) -> np.ndarray:
        if self.coeffs is None:
            k = check_k(_OWNER, self.k)
            return np.r_[np.zeros(k), 1.0]
        return check_coeffs(_OWNER, self.coeffs)

    def embed(self, A: Any, X: Any) -> np.ndarray:
        """The (normalised) embedding ``(n, d)`` the logistic regression sees."""
        a = self._coeffs()
        check_choice("normalize", _OWNER, self.normalize, ("nu", "none"))
        A = as_adjacency(_OWNER, A)
        X = check_array("X", _OWNER, X, shape=(A.shape[0], None)).astype(np.float64)
        H = poly_gnn_embed(A, X, a)
        if self.normalize == "nu":
            nu_hat = A.nnz / A.shape[0]
            if nu_hat == 0:
                raise param_error("A", _OWNER, "a graph with edges for normalize='nu'", "no edge")
            H = H / (a[-1] * nu_hat ** (len(a) - 1))
        return H

    def fit(self, A: Any, X: Any, y: Any, train_mask: Any = None) -> PolyGNNClassifier:
        """Fit on the nodes of ``train_mask`` (``(n,)`` bool; None: all nodes); ``y`` ``(n,)``
        labels (any values, only the masked ones are read)."""
        check_real("C", _OWNER, self.C, low=0, low_open=True)
        H = self.embed(A, X)
        n = H.shape[0]
        y = check_array("y", _OWNER, y, shape=(n,), kind=None)
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            raise param_error("y", _OWNER, "finite (no NaN or inf)", describe(y))
        if train_mask is None:
            mask = np.ones(n, dtype=bool)
        else:
            mask = check_array("train_mask", _OWNER, train_mask, shape=(n,), kind="bool")
        if len(np.unique(y[mask])) < 2:
            raise param_error("y", _OWNER, "two classes or more among the training nodes", y)
        self.model_ = LogisticRegression(C=self.C, max_iter=1000).fit(H[mask], y[mask])
        self.classes_ = self.model_.classes_
        self.coef_, self.intercept_ = self.model_.coef_, self.model_.intercept_
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise param_error("self", _OWNER, "fitted (call fit first)", "unfitted")

    def predict_proba(self, A: Any, X: Any) -> np.ndarray:
        """Class probabilities of every node, ``(n, n_classes)``."""
        self._check_fitted()
        return self.model_.predict_proba(self.embed(A, X))

    def predict(self, A: Any, X: Any) -> np.ndarray:
        """Predicted label of every node, ``(n,)``."""
        self._check_fitted()
        return self.model_.predict(self.embed(A, X))
