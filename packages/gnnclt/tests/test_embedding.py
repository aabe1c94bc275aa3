"""poly_gnn_embed against the dense reference, and PolyGNNClassifier against sklearn."""

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from gnnclt import PolyGNNClassifier, poly_gnn_embed, sample_csbm


def test_horner_equals_dense_reference(two):
    """Spec check 3: sum_j a_j A^j X in float64 at n = 50, to 1e-10."""
    A, X, _ = sample_csbm(two, 50, 8.0, seed=0)
    coeffs = [0.3, -1.2, 0.7, 2.0]
    D = A.toarray()
    ref = sum(a * np.linalg.matrix_power(D, j) @ X for j, a in enumerate(coeffs))
    out = poly_gnn_embed(A, X, coeffs)
    assert np.abs(out - ref).max() <= 1e-10 * max(1.0, np.abs(ref).max())
    assert np.allclose(poly_gnn_embed(D, X, coeffs), out, rtol=0, atol=1e-10)
    assert np.allclose(poly_gnn_embed(sp.coo_matrix(D), X, coeffs), out, rtol=0, atol=1e-10)


def test_classifier_matches_logistic_regression(two):
    """Spec check 10: the same coefficients as LogisticRegression on poly_gnn_embed."""
    A, X, z = sample_csbm(two, 600, 4.0, seed=1)
    mask = np.arange(600) % 2 == 0
    clf = PolyGNNClassifier(k=2, normalize="none").fit(A, X, z, mask)
    ref = LogisticRegression(C=1.0, max_iter=1000).fit(
        poly_gnn_embed(A, X, [0, 0, 1])[mask], z[mask]
    )
    assert np.allclose(clf.coef_, ref.coef_, atol=1e-6) and np.allclose(
        clf.intercept_, ref.intercept_, atol=1e-6
    )
    assert np.array_equal(clf.predict(A, X), ref.predict(poly_gnn_embed(A, X, [0, 0, 1])))


def test_classifier_nu_normalisation_is_a_rescaling(two):
    A, X, z = sample_csbm(two, 3000, 20.0, seed=2)
    clf = PolyGNNClassifier(k=2, coeffs=[0.0, 0.0, 2.0]).fit(A, X, z)
    nu_hat = A.nnz / 3000
    assert np.allclose(clf.embed(A, X), poly_gnn_embed(A, X, [0, 0, 2.0]) / (2.0 * nu_hat**2))
    proba = clf.predict_proba(A, X)
    assert proba.shape == (3000, 2) and np.allclose(proba.sum(1), 1)
    assert (clf.predict(A, X) == z).mean() > 0.9
