"""The CSBM sampler: structure, degrees and block densities (exact Bernoulli edge model)."""

import numpy as np
import scipy.sparse as sp

from gnnclt import sample_csbm


def test_graph_structure_and_class_degrees(csbm):
    n, nu = 20_000, 30.0
    A, X, z = sample_csbm(csbm, n, nu, seed=1)
    assert sp.isspmatrix_csr(A) and A.shape == (n, n) and X.shape == (n, 2)
    assert (A != A.T).nnz == 0 and not A.diagonal().any()
    assert set(np.unique(A.data)) == {1.0}  # no duplicate edge was summed
    deg = np.asarray(A.sum(1)).ravel()
    pi_hat = np.bincount(z, minlength=3) / n
    for c in range(3):
        # expected degree of class c given the realised class sizes: sum_c' nu B_cc' n_c'/n
        expect = nu * csbm.B[c] @ pi_hat - nu * csbm.B[c, c] / n
        d = deg[z == c]
        assert abs(d.mean() - expect) <= 3 * d.std() / np.sqrt(d.size)


def test_block_densities_match_nu_b_over_n(csbm):
    """Spec check 2: empirical block densities within 3 s.e. of nu B_cc'/n at n = 4000."""
    n, nu = 4000, 40.0
    A, _, z = sample_csbm(csbm, n, nu, seed=2)
    A = A.tocoo()
    counts = np.zeros((3, 3))
    np.add.at(counts, (z[A.row], z[A.col]), 1)
    nc = np.bincount(z, minlength=3)
    for c in range(3):
        for c2 in range(c, 3):
            edges = counts[c, c2] / (2 if c == c2 else 1)
            pairs = nc[c] * (nc[c] - 1) / 2 if c == c2 else nc[c] * nc[c2]
            p = nu * csbm.B[c, c2] / n
            assert abs(edges - pairs * p) <= 3 * np.sqrt(pairs * p * (1 - p))


def test_dense_regime_still_exact(two):
    """Probabilities near 1/2: many repeated draws, the top-up still yields distinct pairs."""
    n = 300
    A, _, z = sample_csbm(two, n, 0.49 * n / 3.0, seed=3)
    assert (A != A.T).nnz == 0 and not A.diagonal().any() and A.max() == 1.0
    same = z[:, None] == z[None, :]
    dense = A.toarray()
    block = dense[np.ix_(z == 0, z == 0)]
    m = (z == 0).sum()
    p = 0.49 * 3.0 / 3.0
    pairs = m * (m - 1) / 2
    assert abs(block.sum() / 2 - pairs * p) <= 3 * np.sqrt(pairs * p * (1 - p))
    assert same.shape == dense.shape


def test_features_follow_the_class_means(two):
    _, X, z = sample_csbm(two, 20_000, 5.0, seed=4)
    for c in range(2):
        assert np.allclose(X[z == c].mean(0), two.U[c], atol=0.03)
        assert np.allclose(np.cov(X[z == c].T), two.Sigma, atol=0.03)


def test_seed_determinism(two):
    A1, X1, z1 = sample_csbm(two, 1000, 10.0, seed=7)
    A2, X2, z2 = sample_csbm(two, 1000, 10.0, seed=7)
    A3, _, _ = sample_csbm(two, 1000, 10.0, seed=8)
    assert (A1 != A2).nnz == 0 and np.array_equal(X1, X2) and np.array_equal(z1, z2)
    assert (A1 != A3).nnz > 0
