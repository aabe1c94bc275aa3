r"""The small-scale data of the reproduction: sklearn's digits at 16 × 16 and a "shapes" task.

* :func:`digits16`: the 1,797 8 × 8 handwritten digits bundled with scikit-learn (no download),
  scaled to [0, 1], upsampled bilinearly to 16 × 16 (patch 2 gives an 8 × 8 grid of 64 tokens),
  standardised, and split into a stratified train / test split.
* :func:`shapes`: random shapes on a noisy canvas, 4 classes whose identity lies in local 2-D
  structure: 0 a filled rectangle, 1 a rectangle outline, 2 an upright cross "+", 3 a diagonal
  cross "x"; random size and position.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from paperkit import check_int, check_real

__all__ = ["digits16", "shapes", "train_test_split"]


def train_test_split(
    X: torch.Tensor, y: torch.Tensor, test_fraction: float, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A stratified split: ``test_fraction`` of each class (rounded) goes to the test set."""
    test_fraction = check_real(
        "test_fraction",
        "train_test_split",
        test_fraction,
        low=0,
        high=1,
        low_open=True,
        high_open=True,
    )
    rng = np.random.default_rng(check_int("seed", "train_test_split", seed, low=0))
    test = []
    labels = y.numpy()
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        test.extend(idx[: round(test_fraction * len(idx))])
    mask = np.zeros(len(labels), dtype=bool)
    mask[test] = True
    m = torch.from_numpy(mask)
    return X[~m], y[~m], X[m], y[m]


def digits16(
    size: int = 16, test_fraction: float = 0.25, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """sklearn's digits upsampled to ``size`` × ``size``: X_train (n, 1, size, size) float32,
    y_train (n,) int64, X_test, y_test (standardised with the training mean and std).

    >>> Xtr, ytr, Xte, yte = digits16()
    >>> tuple(Xtr.shape[1:]), len(Xtr) + len(Xte), int(ytr.max())
    ((1, 16, 16), 1797, 9)
    """
    from sklearn.datasets import load_digits

    size = check_int("size", "digits16", size, low=8, high=256)
    data = load_digits()
    X = torch.tensor(data.images, dtype=torch.float32)[:, None] / 16.0
    X = F.interpolate(X, size=(size, size), mode="bilinear", align_corners=False)
    y = torch.tensor(data.target, dtype=torch.int64)
    Xtr, ytr, Xte, yte = train_test_split(X, y, test_fraction, seed)
    mean, std = Xtr.mean(), Xtr.std()
    return (Xtr - mean) / std, ytr, (Xte - mean) / std, yte


def _draw(kind: int, size: int, rng: np.random.Generator) -> np.ndarray:
    img = np.zeros((size, size), dtype=np.float32)
    side = int(rng.integers(size // 3, size // 2 + 2))
    r, c = (int(v) for v in rng.integers(0, size - side + 1, size=2))
    t = max(1, size // 16)  # stroke width
    if kind == 0:
        img[r : r + side, c : c + side] = 1
    elif kind == 1:
        img[r : r + side, c : c + side] = 1
        img[r + t : r + side - t, c + t : c + side - t] = 0
    elif kind == 2:
        mid = side // 2
        img[r : r + side, c + mid - t // 2 : c + mid - t // 2 + t] = 1
        img[r + mid - t // 2 : r + mid - t // 2 + t, c : c + side] = 1
    else:
        for i in range(side):
            for j in range(t):
                img[r + i, min(c + i + j, size - 1)] = 1
                img[r + i, max(c + side - 1 - i - j, 0)] = 1
    return img


def shapes(
    n: int = 2000, size: int = 16, noise: float = 0.3, test_fraction: float = 0.25, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``n`` random shapes (4 balanced classes) on ``size`` × ``size`` canvases with Gaussian
    noise of std ``noise``: X_train (m, 1, size, size), y_train, X_test, y_test.

    >>> Xtr, ytr, Xte, yte = shapes(n=40, size=16)
    >>> tuple(Xtr.shape[1:]), sorted(set(ytr.tolist())), len(Xtr) + len(Xte)
    ((1, 16, 16), [0, 1, 2, 3], 40)
    """
    n = check_int("n", "shapes", n, low=4, high=10**6)
    size = check_int("size", "shapes", size, low=8, high=256)
    noise = check_real("noise", "shapes", noise, low=0)
    rng = np.random.default_rng(check_int("seed", "shapes", seed, low=0))
    y = np.arange(n) % 4
    X = np.stack([_draw(int(k), size, rng) for k in y])
    X += noise * rng.standard_normal(X.shape).astype(np.float32)
    Xt = torch.from_numpy(X)[:, None]
    return train_test_split(Xt, torch.from_numpy(y).long(), test_fraction, seed)
