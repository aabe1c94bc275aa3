r"""Models on the loss-DP frontier: BCE plus a linear Lagrangian DP penalty (as trained in
the paper's experiments).

``train_dp_penalized`` minimises, over a logistic regression or a one-hidden-layer ReLU MLP
f(x, a) = sigma(g([x, a])) (numpy, float64, full batch, Adam),

.. math::  \frac1n \sum_i \ell(y_i, f_i) + \lambda\, \frac1n \sum_i w_{a_i} f_i ,

with w_1 = 1/p_1, w_0 = -1/p_0 (training-set group frequencies), so the penalty is lambda times
the signed DP gap D(f). lambda > 0 pulls D toward 0 (and past it for large lambda); lambda < 0
pushes it away, giving deliberately suboptimal models. The gradient of the objective with
respect to the logit g_i is (f_i - y_i + lambda w_{a_i} f_i (1 - f_i)) / n.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ldafront._checks import check_features, check_groups, check_labels, dp_weights
from paperkit import (
    check_array,
    check_choice,
    check_int,
    check_memory,
    check_real,
    param_error,
)

__all__ = ["PenalizedModel", "train_dp_penalized"]

MODELS = ("logistic", "mlp")
#: The parameters the L2 penalty (weight_decay / 2) ||W||^2 applies to (not the biases).
WEIGHTS = ("w", "W1", "w2")


@dataclass
class PenalizedModel:
    """A trained predictor f(x, a) in (0, 1): logistic (``hidden == 0``) or a ReLU MLP.

    Attributes: ``kind`` ("logistic" or "mlp"), ``params`` (weights), ``mean`` and ``scale``
    (standardisation of the training features), ``lam`` (the penalty it was trained with).
    """

    kind: str
    params: dict[str, np.ndarray]
    mean: np.ndarray
    scale: np.ndarray
    lam: float
    history: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        owner = "PenalizedModel"
        check_choice("kind", owner, self.kind, MODELS)
        if not isinstance(self.params, dict):
            raise param_error(
                "params", owner, "a dict of weights", type(self.params).__name__, cls=TypeError
            )
        dims: dict = {}
        self.mean = check_array("mean", owner, self.mean, shape=("d",), dims=dims).astype(float)
        self.scale = check_array("scale", owner, self.scale, shape=("d",), dims=dims)
        if self.scale.min() <= 0:
            raise param_error("scale", owner, "positive", float(self.scale.min()))
        self.lam = check_real("lam", owner, self.lam)

    def _inputs(self, X: np.ndarray, A: np.ndarray) -> np.ndarray:
        return np.column_stack([(X - self.mean) / self.scale, A.astype(float)])

    def decision_function(self, X: np.ndarray, A: np.ndarray) -> np.ndarray:
        """The logit g([x, a]) for features X (n, d) and groups A (n,). NaN and inf refused."""
        owner = "PenalizedModel.decision_function"
        dims: dict = {"d": (self.mean.size, "the training features")}
        X = check_features("X", owner, X, dims=dims)
        A = check_groups("A", owner, A, dims=dims, both=False)
        return _logit(self.params, self._inputs(X, A))

    def predict_proba(self, X: np.ndarray, A: np.ndarray) -> np.ndarray:
        """P(Y = 1 | x, a), an ``(n,)`` array in (0, 1) (sigmoid of the logit, clipped at
        1e-7 from 0 and 1). NaN and inf refused."""
        return _sigmoid(self.decision_function(X, A))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.clip(0.5 * (1.0 + np.tanh(0.5 * z)), 1e-7, 1.0 - 1e-7)


def _logit(params: dict[str, np.ndarray], Z: np.ndarray) -> np.ndarray:
    if "W1" in params:
        hidden = np.maximum(Z @ params["W1"] + params["b1"], 0.0)
        return hidden @ params["w2"] + params["b2"]
    return Z @ params["w"] + params["b"]


def _init(kind: str, d: int, hidden: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    if kind == "logistic":
        return {"w": np.zeros(d), "b": np.zeros(1)}
    return {
        "W1": rng.normal(0.0, np.sqrt(2.0 / d), (d, hidden)),
        "b1": np.zeros(hidden),
        "w2": rng.normal(0.0, np.sqrt(1.0 / hidden), hidden),
        "b2": np.zeros(1),
    }


def _gradients(
    params: dict[str, np.ndarray], Z: np.ndarray, y: np.ndarray, pen: np.ndarray
) -> tuple[dict[str, np.ndarray], float]:
    """Gradients of mean BCE + mean(pen * f) (pen = lambda w_A) and the objective's value."""
    n = len(y)
    if "W1" in params:
        pre = Z @ params["W1"] + params["b1"]
        hidden = np.maximum(pre, 0.0)
        g = hidden @ params["w2"] + params["b2"]
    else:
        g = Z @ params["w"] + params["b"]
    f = _sigmoid(g)
    objective = float(np.mean(-y * np.log(f) - (1 - y) * np.log1p(-f) + pen * f))
    dg = (f - y + pen * f * (1.0 - f)) / n
    if "W1" not in params:
        return {"w": Z.T @ dg, "b": np.array([dg.sum()])}, objective
    dh = np.outer(dg, params["w2"]) * (pre > 0)
    grads = {
        "W1": Z.T @ dh,
        "b1": dh.sum(axis=0),
        "w2": hidden.T @ dg,
        "b2": np.array([dg.sum()]),
    }
    return grads, objective


def train_dp_penalized(
    X: np.ndarray,
    y: np.ndarray,
    A: np.ndarray,
    lam: float = 0.5,
    *,
    model: str = "mlp",
    hidden: int = 32,
    epochs: int = 300,
    lr: float = 1e-2,
    weight_decay: float = 0.0,
    seed: int = 0,
) -> tuple[PenalizedModel, dict[str, Any]]:
    r"""Train f(x, a) minimising BCE + lam * D(f) (module docstring), full batch with Adam.

    Args:
        X: ``(n, d)`` features (standardised inside); y: ``(n,)`` labels in [0, 1];
        A: ``(n,)`` binary groups (an input of the model and the DP groups).
        lam: the Lagrangian penalty lambda (any real; negative raises the gap).
        model: ``"logistic"`` or ``"mlp"`` (one hidden ReLU layer of ``hidden`` units).
        epochs: full-batch Adam steps; lr: Adam's step size (betas 0.9, 0.999).
        weight_decay: L2 penalty (weight_decay / 2) ||W||^2 on the weights (not the biases),
            added to the objective's gradient; 0 is the plain objective above.
        seed: seeds the MLP's initialisation (logistic starts at 0).

    Returns:
        ``(model, stats)``: the :class:`PenalizedModel` and a dict with the training ``loss``
        (BCE), signed ``dp``, ``objective``, wall ``seconds`` and ``cpu_seconds`` (process
        CPU time, robust on a shared machine) and the settings.

    NaN and inf refused. Deterministic for a seed.

    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); A = rng.integers(0, 2, 200)
    >>> y = (X[:, 0] + A + rng.normal(size=200) > 0.5).astype(float)
    >>> m0, s0 = train_dp_penalized(X, y, A, 0.0, model="logistic", epochs=100)
    >>> m1, s1 = train_dp_penalized(X, y, A, 0.2, model="logistic", epochs=100)
    >>> bool(abs(s1["dp"]) < abs(s0["dp"]) and s1["loss"] > s0["loss"])
    True
    """
    owner = "train_dp_penalized"
    dims: dict = {}
    X = check_features("X", owner, X, dims=dims)
    y = check_labels("y", owner, y, dims=dims)
    A = check_groups("A", owner, A, dims=dims)
    lam = check_real("lam", owner, lam)
    model = check_choice("model", owner, model, MODELS)
    hidden = check_int("hidden", owner, hidden, low=1, high=4096)
    epochs = check_int("epochs", owner, epochs, low=1, high=100_000)
    lr = check_real("lr", owner, lr, low=0.0, low_open=True, high=10.0)
    weight_decay = check_real("weight_decay", owner, weight_decay, low=0.0)
    seed = check_int("seed", owner, seed, low=0)
    n, d = X.shape
    width = hidden if model == "mlp" else 1
    check_memory("X", owner, X, 8.0 * n * (d + 1 + 3 * width))
    if len(np.unique(y)) < 2 and np.isin(y, (0.0, 1.0)).all():
        raise param_error("y", owner, "labels of both classes", f"only label {y[0]:g}")
    rng = np.random.default_rng(seed)
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    Z = np.column_stack([(X - mean) / scale, A.astype(float)])
    params = _init(model, d + 1, hidden, rng)
    pen = lam * dp_weights(A)
    first = {k: np.zeros_like(v) for k, v in params.items()}
    second = {k: np.zeros_like(v) for k, v in params.items()}
    history = []
    start, cpu_start = time.perf_counter(), time.process_time()
    for t in range(1, epochs + 1):
        grads, objective = _gradients(params, Z, y, pen)
        history.append(objective)
        for k, g in grads.items():
            if k in WEIGHTS:
                g = g + weight_decay * params[k]
            first[k] = 0.9 * first[k] + 0.1 * g
            second[k] = 0.999 * second[k] + 0.001 * g * g
            step = first[k] / (1 - 0.9**t) / (np.sqrt(second[k] / (1 - 0.999**t)) + 1e-8)
            params[k] = params[k] - lr * step
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    fitted = PenalizedModel(model, params, mean, scale, lam, history)
    f = _sigmoid(_logit(params, Z))
    stats = {
        "loss": float(np.mean(-y * np.log(f) - (1 - y) * np.log1p(-f))),
        "dp": float(np.mean(dp_weights(A) * f)),
        "objective": float(np.mean(-y * np.log(f) - (1 - y) * np.log1p(-f) + pen * f)),
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "lam": lam,
        "model": model,
        "hidden": hidden if model == "mlp" else 0,
        "epochs": epochs,
        "lr": lr,
        "weight_decay": weight_decay,
        "n": n,
    }
    return fitted, stats
