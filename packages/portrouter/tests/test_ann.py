import numpy as np
import pytest

from paperkit.testing import assert_param_error
from portrouter import ANNIndex, estimate_features


def _unit(rng, n, p):
    x = rng.standard_normal((n, p)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_exact_features_equal_a_naive_top_k_mean():
    rng = np.random.default_rng(0)
    hist, q = _unit(rng, 300, 16), _unit(rng, 20, 16)
    d, g = rng.random((300, 4)), rng.random((300, 4)) * 1e-3
    index = ANNIndex("exact", dim=16, k=5)
    index.add(hist)
    d_hat, g_hat = estimate_features(index, d, g, q)
    for j in range(20):
        top = np.argsort(-(hist @ q[j]))[:5]
        np.testing.assert_allclose(d_hat[j], d[top].mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(g_hat[j], g[top].mean(axis=0), rtol=1e-12)


@pytest.mark.parametrize("method", ["hnsw", "faiss"])
def test_recall_at_5_against_exact(method):
    rng = np.random.default_rng(1)
    hist, q = _unit(rng, 5000, 64), _unit(rng, 200, 64)
    exact, other = ANNIndex("exact", dim=64, k=5), ANNIndex(method, dim=64, k=5)
    exact.add(hist)
    other.add(hist)
    truth, found = exact.search(q)[0], other.search(q)[0]
    recall = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(truth, found, strict=True)])
    assert recall >= (0.9 if method == "hnsw" else 0.999)
    sims = other.search(q)[1]
    assert np.all(np.diff(sims, axis=1) <= 1e-6)  # best first


def test_hnsw_is_deterministic_and_grows():
    rng = np.random.default_rng(2)
    hist, q = _unit(rng, 800, 32), _unit(rng, 30, 32)
    a, b = ANNIndex("hnsw", dim=32, k=5, seed=3), ANNIndex("hnsw", dim=32, k=5, seed=3)
    a.add(hist)
    b.add(hist[:400])
    b.add(hist[400:])
    assert len(b) == 800 and b.search(q)[0].max() < 800
    c = ANNIndex("hnsw", dim=32, k=5, seed=3)
    c.add(hist)
    np.testing.assert_array_equal(a.search(q)[0], c.search(q)[0])


def test_bad_input():
    index = ANNIndex("exact", dim=8, k=5)
    index.add(np.eye(8)[:3])
    assert_param_error(lambda: index.search(np.ones((1, 8))), param="k")  # k > history size
    assert_param_error(lambda: index.add(np.ones((2, 7))), param="emb")  # dim mismatch
    assert_param_error(lambda: index.search(np.ones((1, 9))), param="q")
    assert_param_error(lambda: index.add(np.full((1, 8), np.nan)), param="emb")
    assert_param_error(lambda: ANNIndex("annoy", dim=8), param="method")
    assert_param_error(lambda: ANNIndex("exact", dim=8, k=0), param="k")
    big = ANNIndex("exact", dim=8, k=2)
    big.add(np.eye(8))
    d = np.ones((8, 2))
    d[0, 0] = np.nan
    assert_param_error(
        lambda: estimate_features(big, d, np.ones((8, 2)), np.eye(8)[:1]), param="hist_d"
    )
    assert_param_error(
        lambda: estimate_features(big, np.ones((5, 2)), np.ones((5, 2)), np.eye(8)[:1]),
        param="hist_d",
    )
