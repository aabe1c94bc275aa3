"""The online models, in numpy: multinomial logistic regression and a one-hidden-layer MLP.

Both minimise the mean cross-entropy l(theta; B) = -(1/|B|) sum_i log softmax(f(x_i))_{y_i} by
plain SGD steps theta <- theta - eta grad l(theta; B) (the update of the paper's Sec. 3).
"""

from __future__ import annotations

import numpy as np

from paperkit import check_array, check_int, check_real

__all__ = ["LogisticModel", "MLPModel"]


def _softmax_xent(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    loss = float(-np.mean(np.log(p[np.arange(len(y)), y] + 1e-300)))
    grad = p.copy()
    grad[np.arange(len(y)), y] -= 1.0
    return loss, grad / len(y), p


def _check_batch(model, X, y, owner: str) -> tuple[np.ndarray, np.ndarray]:
    n_features, n_classes = model.shape
    dims: dict = {}
    X = check_array("X", owner, X, shape=("N", n_features), dims=dims).astype(float)
    y = check_array("y", owner, y, shape=("N",), dims=dims, kind="int")
    if y.min() < 0 or y.max() >= n_classes:
        raise ValueError(
            f"The 'y' parameter of {owner} must hold labels in [0, {n_classes}). "
            f"Got labels in [{y.min()}, {y.max()}] instead."
        )
    return X, y


def _check_sizes(owner: str, n_features: int, n_classes: int, seed: int) -> tuple[int, int]:
    check_int("seed", owner, seed, low=0)
    return (
        check_int("n_features", owner, n_features, low=1, high=10**5),
        check_int("n_classes", owner, n_classes, low=2, high=10**4),
    )


class LogisticModel:
    """Multinomial logistic regression, logits = X W + b, initialised at zero.

    NaN policy: NaN or infinite features are refused with a ValueError naming ``X``.
    """

    def __init__(self, n_features: int, n_classes: int, seed: int = 0) -> None:
        n_features, n_classes = _check_sizes("LogisticModel", n_features, n_classes, seed)
        self.shape = (n_features, n_classes)
        self.W = np.zeros((n_features, n_classes))
        self.b = np.zeros(n_classes)

    def evaluate(self, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        """(mean cross-entropy, accuracy) on the batch X (N, d), y (N,) integer labels."""
        X, y = _check_batch(self, X, y, "LogisticModel.evaluate")
        logits = X @ self.W + self.b
        loss, _, p = _softmax_xent(logits, y)
        return loss, float(np.mean(p.argmax(axis=1) == y))

    def sgd_step(self, X: np.ndarray, y: np.ndarray, lr: float) -> None:
        """One SGD step on the batch's mean cross-entropy."""
        X, y = _check_batch(self, X, y, "LogisticModel.sgd_step")
        lr = check_real("lr", "LogisticModel.sgd_step", lr, low=0, low_open=True)
        _, g, _ = _softmax_xent(X @ self.W + self.b, y)
        self.W -= lr * (X.T @ g)
        self.b -= lr * g.sum(axis=0)


class MLPModel:
    """One hidden ReLU layer of ``width`` units, He-initialised from ``seed``:
    logits = relu(X W1 + b1) W2 + b2.

    NaN policy: NaN or infinite features are refused with a ValueError naming ``X``.
    """

    def __init__(self, n_features: int, n_classes: int, seed: int = 0, width: int = 64) -> None:
        n_features, n_classes = _check_sizes("MLPModel", n_features, n_classes, seed)
        width = check_int("width", "MLPModel", width, low=1, high=10**5)
        self.shape = (n_features, n_classes)
        rng = np.random.default_rng(seed)
        self.W1 = rng.standard_normal((n_features, width)) * np.sqrt(2.0 / n_features)
        self.b1 = np.zeros(width)
        self.W2 = rng.standard_normal((width, n_classes)) * np.sqrt(1.0 / width)
        self.b2 = np.zeros(n_classes)

    def _forward(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h = np.maximum(X @ self.W1 + self.b1, 0.0)
        return h, h @ self.W2 + self.b2

    def evaluate(self, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        """(mean cross-entropy, accuracy) on the batch X (N, d), y (N,) integer labels."""
        X, y = _check_batch(self, X, y, "MLPModel.evaluate")
        loss, _, p = _softmax_xent(self._forward(X)[1], y)
        return loss, float(np.mean(p.argmax(axis=1) == y))

    def sgd_step(self, X: np.ndarray, y: np.ndarray, lr: float) -> None:
        """One SGD step (backpropagation through the ReLU layer) on the batch's mean
        cross-entropy."""
        X, y = _check_batch(self, X, y, "MLPModel.sgd_step")
        lr = check_real("lr", "MLPModel.sgd_step", lr, low=0, low_open=True)
        h, logits = self._forward(X)
        _, g, _ = _softmax_xent(logits, y)
        gh = (g @ self.W2.T) * (h > 0)
        self.W2 -= lr * (h.T @ g)
        self.b2 -= lr * g.sum(axis=0)
        self.W1 -= lr * (X.T @ gh)
        self.b1 -= lr * gh.sum(axis=0)
