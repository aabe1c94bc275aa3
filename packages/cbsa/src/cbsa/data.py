r"""Data: tokens on a union of low-dimensional subspaces (the paper's synthetic setting) and the
scikit-learn digits as small images (bundled with scikit-learn, nothing downloaded).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from paperkit import check_int, check_memory, check_real

__all__ = ["digits_images", "union_of_subspaces"]


def union_of_subspaces(
    n: int = 256, D: int = 32, K: int = 4, p: int = 4, noise: float = 0.05, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    r"""n tokens in R^D drawn from K mutually orthogonal p-dimensional subspaces, plus noise:

    .. math:: z_i = U_{y_i} c_i + \sigma e_i,\quad c_i \sim \mathcal N(0, I_p),\;
              e_i \sim \mathcal N(0, I_D / D),

    with labels :math:`y_i` uniform over the K subspaces (balanced) in random order and the
    orthonormal bases :math:`U_k` (D x p) from the QR factor of a Gaussian D x Kp matrix.

    Returns ``(Z (n, D), labels (n,), U_list)`` in float64. NaN policy: every argument must be
    finite (ValueError); ``K * p <= D``.

    >>> Z, y, U = union_of_subspaces(n=40, D=8, K=2, p=3, noise=0.0, seed=1)
    >>> Z.shape, y.shape, len(U), bool(torch.allclose(U[0].T @ U[1], 0 * U[0][:3]))
    (torch.Size([40, 8]), torch.Size([40]), 2, True)
    """
    owner = "union_of_subspaces"
    n = check_int("n", owner, n, low=1, high=10**7)
    D = check_int("D", owner, D, low=1, high=10**5)
    K = check_int("K", owner, K, low=1, high=D)
    p = check_int("p", owner, p, low=1, high=D // K)
    noise = check_real("noise", owner, noise, low=0)
    seed = check_int("seed", owner, seed, low=0)
    check_memory("n", owner, n, 8.0 * n * D * 3)
    g = torch.Generator().manual_seed(seed)
    Q = torch.linalg.qr(torch.randn(D, K * p, generator=g, dtype=torch.float64))[0]
    U_list = [Q[:, k * p : (k + 1) * p].contiguous() for k in range(K)]
    labels = torch.arange(n) % K
    labels = labels[torch.randperm(n, generator=g)]
    coef = torch.randn(n, p, generator=g, dtype=torch.float64)
    bases = torch.stack(U_list)[labels]  # (n, D, p)
    Z = (bases @ coef.unsqueeze(-1)).squeeze(-1)
    Z = Z + noise * torch.randn(n, D, generator=g, dtype=torch.float64) / D**0.5
    return Z, labels, U_list


def digits_images(upsample: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """The 1797 scikit-learn digits (8 x 8, values 0..16) as float32 images (1797, 1, s, s),
    bilinearly resized to s = ``upsample`` and standardised (zero mean, unit variance over the
    data set), with their labels (1797,) int64.

    NaN policy: ``upsample`` must be an integer in [8, 256] (ValueError otherwise).

    >>> X, y = digits_images(16)
    >>> tuple(X.shape), int(y.max())
    ((1797, 1, 16, 16), 9)
    """
    upsample = check_int("upsample", "digits_images", upsample, low=8, high=256)
    images, target = _load_digits()
    X = torch.tensor(images, dtype=torch.float32).view(-1, 1, 8, 8) / 16.0
    if upsample != 8:
        X = F.interpolate(X, size=(upsample, upsample), mode="bilinear", align_corners=False)
    X = (X - X.mean()) / X.std()
    return X, torch.tensor(target, dtype=torch.int64)


def _load_digits() -> tuple[np.ndarray, np.ndarray]:
    """The digits' pixels (1797, 64) and labels, read from scikit-learn's bundled
    ``datasets/data/digits.csv.gz`` (what ``sklearn.datasets.load_digits`` reads) without
    importing scikit-learn, whose import takes seconds; through ``load_digits`` if the file moved.
    """
    spec = importlib.util.find_spec("sklearn")
    path = Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz" if spec else None
    if path is not None and path.is_file():
        data = np.loadtxt(path, delimiter=",")
        return data[:, :-1], data[:, -1].astype(np.int64)
    from sklearn.datasets import load_digits

    digits = load_digits()
    return digits.data, digits.target
