"""Offline federated data: scikit-learn's digits (8×8, 10 classes) with Dirichlet label skew.

Split: a stratified ``test_frac`` test set; of the rest, a ``public_frac`` public split for
"pretraining" and the remainder dealt to K clients with per-class proportions
``p_c ~ Dirichlet(α·1_K)`` (small α: strong label skew). Pixels are scaled to [0, 1] and
centred by the public split's mean. ``noise`` adds Gaussian pixel noise to the public split only
(the "pretrained on noisy, fine-tuned on clean digits" case).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from paperkit import param_error

__all__ = ["FederatedData", "dirichlet_split", "make_federated_digits"]


@dataclass
class FederatedData:
    """Public (pretraining) split, one (X, y) per client, and the test split; float32/int64."""

    public: tuple[torch.Tensor, torch.Tensor]
    clients: list[tuple[torch.Tensor, torch.Tensor]]
    test: tuple[torch.Tensor, torch.Tensor]
    n_classes: int

    @property
    def n_features(self) -> int:
        return int(self.public[0].shape[1])


def dirichlet_split(
    y: np.ndarray, clients: int, alpha: float, rng: np.random.Generator, min_size: int = 10
) -> list[np.ndarray]:
    """Indices per client with per-class shares ~ Dirichlet(α); redrawn until every client has
    at least ``min_size`` samples."""
    for _ in range(1000):
        parts: list[list[int]] = [[] for _ in range(clients)]
        for c in np.unique(y):
            idx = rng.permutation(np.flatnonzero(y == c))
            cuts = (np.cumsum(rng.dirichlet(np.full(clients, alpha)))[:-1] * idx.size).astype(int)
            for k, chunk in enumerate(np.split(idx, cuts)):
                parts[k].extend(chunk.tolist())
        if min(len(p) for p in parts) >= min_size:
            return [np.sort(np.asarray(p)) for p in parts]
    raise param_error("alpha", "dirichlet_split", "large enough to give every client data", alpha)


def make_federated_digits(
    clients: int = 4,
    alpha: float = 0.5,
    public_frac: float = 0.3,
    seed: int = 0,
    *,
    test_frac: float = 0.2,
    noise: float = 0.0,
) -> FederatedData:
    """Digits split into a public pretraining set, K label-skewed clients and a test set."""
    if isinstance(clients, bool) or not isinstance(clients, int) or clients < 2:
        raise param_error("clients", "make_federated_digits", "an integer >= 2", clients)
    if not alpha > 0:
        raise param_error("alpha", "make_federated_digits", "positive", alpha)
    if not 0 < public_frac < 1:
        raise param_error("public_frac", "make_federated_digits", "in (0, 1)", public_frac)
    if not 0 < test_frac < 1:
        raise param_error("test_frac", "make_federated_digits", "in (0, 1)", test_frac)
    if not noise >= 0:
        raise param_error("noise", "make_federated_digits", "non-negative", noise)
    from sklearn.datasets import load_digits  # imported here: client processes never need it
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    rng = np.random.default_rng(seed)
    X_rest, X_test, y_rest, y_test = train_test_split(
        X, y, test_size=test_frac, stratify=y, random_state=seed
    )
    X_pub, X_fed, y_pub, y_fed = train_test_split(
        X_rest, y_rest, train_size=public_frac, stratify=y_rest, random_state=seed
    )
    mean = X_pub.mean(0)
    if noise > 0:
        X_pub = X_pub + noise * rng.standard_normal(X_pub.shape)

    def tensors(a: np.ndarray, b: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.tensor(a - mean, dtype=torch.float32), torch.tensor(b, dtype=torch.int64)

    parts = dirichlet_split(y_fed, clients, alpha, rng)
    return FederatedData(
        public=tensors(X_pub, y_pub),
        clients=[tensors(X_fed[p], y_fed[p]) for p in parts],
        test=tensors(X_test, y_test),
        n_classes=10,
    )
