"""The penalised trainer: gradients, the penalty's direction, determinism."""

import numpy as np
import pytest

from ldafront import train_dp_penalized
from ldafront.training import _gradients, _init


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3))
    X[:, 0] += A
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(float)
    return X, y, A


@pytest.mark.parametrize("kind", ["logistic", "mlp"])
def test_gradients_match_finite_differences(kind):
    X, y, A = _data(50)
    Z = np.column_stack([X, A])
    rng = np.random.default_rng(1)
    params = _init(kind, 4, 5, rng)
    params = {k: v + 0.1 * rng.normal(size=v.shape) for k, v in params.items()}
    pen = 0.3 * np.where(A == 1, 1 / A.mean(), -1 / (1 - A.mean()))
    grads, _ = _gradients(params, Z, y, pen)
    for k, v in params.items():
        for idx in [tuple(np.zeros(v.ndim, dtype=int)), tuple(np.array(v.shape) - 1)]:
            step = np.zeros_like(v)
            step[idx] = 1e-6
            up = _gradients({**params, k: v + step}, Z, y, pen)[1]
            down = _gradients({**params, k: v - step}, Z, y, pen)[1]
            assert abs((up - down) / 2e-6 - grads[k][idx]) < 1e-6


def test_penalty_moves_the_gap_both_ways_and_is_deterministic():
    X, y, A = _data()
    stats = {
        lam: train_dp_penalized(X, y, A, lam, model="mlp", hidden=8, epochs=150, seed=3)[1]
        for lam in (-0.1, 0.0, 0.1)
    }
    assert stats[-0.1]["dp"] > stats[0.0]["dp"] > stats[0.1]["dp"]
    again = train_dp_penalized(X, y, A, 0.1, model="mlp", hidden=8, epochs=150, seed=3)[1]
    assert again["loss"] == stats[0.1]["loss"] and again["dp"] == stats[0.1]["dp"]


def test_model_predicts_probabilities_for_one_group():
    X, y, A = _data()
    model, _ = train_dp_penalized(X, y, A, 0.0, model="logistic", epochs=50)
    f = model.predict_proba(X[:5], np.ones(5, dtype=int))
    assert f.shape == (5,) and np.all((f > 0) & (f < 1))
