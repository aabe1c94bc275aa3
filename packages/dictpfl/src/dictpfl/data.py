"""Offline federated data: scikit-learn's digits (8×8, 10 classes) with Dirichlet label skew.

Split: a stratified ``test_frac`` test set; of the rest, a ``public_frac`` public split for
"pretraining" and the remainder dealt to K clients with per-class proportions
``p_c ~ Dirichlet(α·1_K)`` (small α: strong label skew). Pixels are scaled to [0, 1] and
centred by the public split's mean. ``noise`` adds Gaussian pixel noise to the public split only
(the "pretrained on noisy, fine-tuned on clean digits" case).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from paperkit import Described, check_array, check_int, check_real, describe, param_error

__all__ = ["FederatedData", "check_federated_data", "dirichlet_split", "make_federated_digits"]

#: The smallest client shard :func:`make_federated_digits` deals (see :func:`dirichlet_split`).
MIN_CLIENT_SIZE = 10


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


def check_federated_data(name: str, owner: str, data: Any) -> FederatedData:
    """A :class:`FederatedData` whose splits are (X, y) pairs: X an (n, d) finite floating tensor
    with the public split's d features, y an (n,) integer tensor of labels in [0, n_classes),
    n >= 1; two clients at least. Errors name ``name`` (the argument as the user passed it) and
    the split at fault."""
    if not isinstance(data, FederatedData):
        raise param_error(name, owner, "a FederatedData", describe(data), cls=TypeError)
    k = data.n_classes
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise param_error(name, owner, "data with n_classes >= 2", describe(k))
    if not isinstance(data.clients, (list, tuple)) or len(data.clients) < 2:
        raise param_error(
            name, owner, "data with two client splits at least", describe(data.clients)
        )
    splits = {"public": data.public, "test": data.test}
    splits.update({f"client {i}": part for i, part in enumerate(data.clients)})
    d = None
    for where, part in splits.items():
        if not isinstance(part, (list, tuple)) or len(part) != 2:
            raise param_error(
                name,
                owner,
                f"data whose {where} split is an (X, y) pair",
                describe(part),
                cls=TypeError,
            )
        X, y = part
        if not isinstance(X, torch.Tensor) or not X.is_floating_point():
            raise param_error(
                name,
                owner,
                f"data whose {where} features are a floating tensor",
                describe(X),
                cls=TypeError,
            )
        if not isinstance(y, torch.Tensor) or y.is_floating_point() or y.dtype == torch.bool:
            raise param_error(
                name,
                owner,
                f"data whose {where} labels are an integer tensor",
                describe(y),
                cls=TypeError,
            )
        d = int(X.shape[-1]) if d is None else d
        if X.ndim != 2 or X.shape[1] != d or y.shape != (X.shape[0],) or X.shape[0] == 0:
            raise param_error(
                name,
                owner,
                f"data whose {where} split has features (n, {d}) like the public split and "
                "labels (n,), n >= 1",
                Described(f"features {tuple(X.shape)} and labels {tuple(y.shape)}"),
            )
        if not bool(torch.isfinite(X).all()):
            raise param_error(
                name, owner, f"data whose {where} features are finite (no NaN or inf)", describe(X)
            )
        if int(y.min()) < 0 or int(y.max()) >= k:
            raise param_error(
                name,
                owner,
                f"data whose labels lie in [0, {k})",
                Described(f"{where} labels from {int(y.min())} to {int(y.max())}"),
            )
    return data


def dirichlet_split(
    y: np.ndarray, clients: int, alpha: float, rng: np.random.Generator, min_size: int = 10
) -> list[np.ndarray]:
    """Indices per client with per-class shares ~ Dirichlet(α); redrawn until every client has
    at least ``min_size`` samples.

    ``y``: a 1-D array of non-negative integer labels, with ``clients · min_size`` entries at
    least; ``rng``: a ``numpy.random.Generator``. Integer input, so no NaN can arise.

    >>> parts = dirichlet_split(np.repeat([0, 1], 20), 2, 1.0, np.random.default_rng(0), 5)
    >>> sum(len(p) for p in parts), min(len(p) for p in parts) >= 5
    (40, True)
    """
    owner = "dirichlet_split"
    y = check_array("y", owner, y, ndim=1, kind="int")
    if int(y.min()) < 0:
        raise param_error("y", owner, "labels >= 0", Described(f"a smallest label {int(y.min())}"))
    clients = check_int("clients", owner, clients, low=2)
    alpha = check_real("alpha", owner, alpha, low=0, low_open=True)
    if not isinstance(rng, np.random.Generator):
        raise param_error(
            "rng",
            owner,
            "a numpy.random.Generator",
            Described(f"a {type(rng).__name__}"),
            cls=TypeError,
        )
    min_size = check_int("min_size", owner, min_size, low=0)
    if clients * min_size > y.size:
        raise param_error(
            "clients",
            owner,
            f"at most len(y) / min_size = {y.size // max(min_size, 1)} clients",
            clients,
        )
    parts = _dirichlet_split(y, clients, alpha, rng, min_size)
    if parts is None:
        raise param_error("alpha", owner, "large enough to give every client data", alpha)
    return parts


def _dirichlet_split(
    y: np.ndarray, clients: int, alpha: float, rng: np.random.Generator, min_size: int
) -> list[np.ndarray] | None:
    """:func:`dirichlet_split` without the checks; None when 1000 draws all leave a client with
    fewer than ``min_size`` samples."""
    for _ in range(1000):
        parts: list[list[int]] = [[] for _ in range(clients)]
        for c in np.unique(y):
            idx = rng.permutation(np.flatnonzero(y == c))
            cuts = (np.cumsum(rng.dirichlet(np.full(clients, alpha)))[:-1] * idx.size).astype(int)
            for k, chunk in enumerate(np.split(idx, cuts)):
                parts[k].extend(chunk.tolist())
        if min(len(p) for p in parts) >= min_size:
            return [np.sort(np.asarray(p)) for p in parts]
    return None


def make_federated_digits(
    clients: int = 4,
    alpha: float = 0.5,
    public_frac: float = 0.3,
    seed: int = 0,
    *,
    test_frac: float = 0.2,
    noise: float = 0.0,
) -> FederatedData:
    """Digits split into a public pretraining set, K label-skewed clients and a test set.

    ``clients`` >= 2, each dealt ``MIN_CLIENT_SIZE`` samples at least (so at most about 100
    clients); ``alpha`` > 0; ``public_frac``, ``test_frac`` in (0, 1); ``noise`` >= 0. NaN is
    refused in every real argument.
    """
    owner = "make_federated_digits"
    clients = check_int("clients", owner, clients, low=2)
    alpha = check_real("alpha", owner, alpha, low=0, low_open=True)
    public_frac = check_real(
        "public_frac", owner, public_frac, low=0, high=1, low_open=True, high_open=True
    )
    seed = check_int("seed", owner, seed, low=0)
    test_frac = check_real(
        "test_frac", owner, test_frac, low=0, high=1, low_open=True, high_open=True
    )
    noise = check_real("noise", owner, noise, low=0)
    from sklearn.datasets import load_digits  # imported here: client processes never need it
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    federated = int(len(y) * (1 - test_frac) * (1 - public_frac))
    if clients * MIN_CLIENT_SIZE > federated:
        raise param_error(
            "clients",
            owner,
            f"at most {federated // MIN_CLIENT_SIZE} (each client gets {MIN_CLIENT_SIZE} of the "
            f"{federated} federated samples at least)",
            clients,
        )
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

    parts = _dirichlet_split(y_fed, clients, alpha, rng, MIN_CLIENT_SIZE)
    if parts is None:
        raise param_error(
            "alpha", owner, f"large enough to deal every client {MIN_CLIENT_SIZE} samples", alpha
        )
    return FederatedData(
        public=tensors(X_pub, y_pub),
        clients=[tensors(X_fed[p], y_fed[p]) for p in parts],
        test=tensors(X_test, y_test),
        n_classes=10,
    )
