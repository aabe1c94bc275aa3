r"""Readouts of KC spike counts: the MBON stand-ins that learn the odor classes.

* ``"logistic"``: multinomial logistic regression (softmax cross-entropy) with the L2 penalty
  :math:`\frac{\lambda}{2}\lVert W\rVert^2` added to the mean loss, :math:`\lambda = 10^{-3}`:
  the supervised stand-in for dopamine-gated KC -> MBON plasticity.
* ``"dopamine"``: one MBON per class, weights start at 1; each training odor of class c
  depresses the synapses of the KCs it fired onto every other MBON,
  :math:`w_{mk} \leftarrow w_{mk}(1 - \eta\, 1[c_k > 0])` for :math:`m \ne c` (anti-Hebbian,
  as dopamine-induced depression at the KC -> MBON synapse); the decision is the MBON with the
  largest drive :math:`\sum_k w_{mk} c_k`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_array, check_choice, check_real, param_error

__all__ = ["READOUTS", "Readout", "train_readout"]

READOUTS = ("logistic", "dopamine")


def _counts(name: str, owner: str, x: Any, n_features: int | None = None) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    x = check_array(name, owner, x, shape=("B", n_features))
    if (x < 0).any():
        raise param_error(name, owner, "non-negative (spike counts)", "negative entries")
    return x.astype(np.float64)


class Readout:
    """A trained readout: ``predict(counts)`` -> labels, ``score(counts, labels)`` -> accuracy."""

    def __init__(self, kind: str, classes: np.ndarray, weights: np.ndarray, model: Any = None):
        self.kind, self.classes, self.weights, self.model = kind, classes, weights, model

    def predict(self, counts: Any) -> np.ndarray:
        """Predicted labels (B,) for KC counts (B, N).

        NaN policy: NaN, inf and negative counts are refused (ValueError)."""
        x = _counts("counts", "Readout.predict", counts, self.weights.shape[1])
        if self.model is not None:
            return self.model.predict(x)
        return self.classes[np.argmax(x @ self.weights.T, axis=1)]

    def score(self, counts: Any, labels: Any) -> float:
        """Accuracy of :meth:`predict` on (counts, labels).

        NaN policy: NaN, inf and negative counts are refused (ValueError)."""
        pred = self.predict(counts)
        y = np.asarray(labels.detach().cpu() if hasattr(labels, "detach") else labels)
        y = check_array("labels", "Readout.score", y, shape=(len(pred),), kind="int")
        if (y < 0).any():
            raise param_error(
                "labels", "Readout.score", "non-negative class indices", "negative labels"
            )
        return float((pred == y).mean())


def train_readout(
    counts: Any, labels: Any, kind: str = "logistic", l2: float = 1e-3, eta: float = 0.5
) -> Readout:
    r"""Train a readout of KC counts (B, N) to integer labels (B,) (see the module docstring).

    Args:
        counts: spike counts (B, N), tensor or array.
        labels: class labels (B,), at least two classes.
        kind: ``"logistic"`` or ``"dopamine"``.
        l2: :math:`\lambda`, the L2 penalty of the logistic readout.
        eta: :math:`\eta`, the depression rate of the dopamine readout, in (0, 1].

    NaN policy: NaN, inf and negative counts are refused (ValueError).

    >>> x = np.array([[3, 0], [4, 0], [0, 2], [0, 5]]); y = np.array([0, 0, 1, 1])
    >>> train_readout(x, y, kind="dopamine").predict(x).tolist()
    [0, 0, 1, 1]
    """
    owner = "train_readout"
    x = _counts("counts", owner, counts)
    y = labels.detach().cpu().numpy() if hasattr(labels, "detach") else labels
    y = check_array("labels", owner, y, shape=(x.shape[0],), kind="int")
    if (y < 0).any():
        raise param_error("labels", owner, "non-negative class indices", "negative labels")
    check_choice("kind", owner, kind, READOUTS)
    l2 = check_real("l2", owner, l2, low=0, low_open=True)
    eta = check_real("eta", owner, eta, low=0, high=1, low_open=True)
    classes = np.unique(y)
    if classes.size < 2:
        raise param_error("labels", owner, "at least 2 classes", f"{classes.size} class")
    if kind == "logistic":
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(C=1.0 / (l2 * x.shape[0]), max_iter=2000)
        model.fit(x, y)
        return Readout(kind, classes, model.coef_, model)
    weights = np.ones((classes.size, x.shape[1]))
    fired = x > 0
    for row, label in zip(fired, y, strict=True):
        others = classes != label
        weights[others] *= 1.0 - eta * row
    return Readout(kind, classes, weights)
