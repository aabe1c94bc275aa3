"""The reproduction's data: scikit-learn's bundled digits (1797 images, 8x8, no download).

- Pre-training: every image of the digits 0-4 (labels 0-4).
- Downstream, a shifted low-data task: the digits 5-9 with every image transposed (columns become
  the tokens: another "domain"), labels 0-4; ``n_train`` images (drawn with ``seed``) to train on,
  the rest to test.

Pixels are scaled from 0..16 to [0, 1]; images are ``[n, 8, 8]`` float32 tensors (rows are tokens).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from paperkit import check_int

__all__ = ["DigitsTasks", "digits_tasks"]


@dataclass
class DigitsTasks:
    """Pre-training set (``X_pre``, ``y_pre``) and the downstream train / test split."""

    X_pre: Tensor
    y_pre: Tensor
    X_train: Tensor
    y_train: Tensor
    X_test: Tensor
    y_test: Tensor


def digits_tasks(seed: int = 0, n_train: int = 300) -> DigitsTasks:
    """Load the digits and build the pre-training and the downstream tasks (see the module)."""
    from sklearn.datasets import load_digits

    owner = "digits_tasks"
    seed = check_int("seed", owner, seed, low=0)
    n_train = check_int("n_train", owner, n_train, low=1, high=895)  # 896 images of 5-9
    digits = load_digits()
    images = torch.tensor(digits.images / 16.0, dtype=torch.float32)
    labels = torch.tensor(digits.target, dtype=torch.int64)
    pre = labels < 5
    down = torch.nonzero(~pre).squeeze(1).numpy()
    order = down[np.random.default_rng(seed).permutation(len(down))]
    train, test = torch.from_numpy(order[:n_train]), torch.from_numpy(order[n_train:])
    shifted = images.transpose(1, 2).contiguous()
    return DigitsTasks(
        X_pre=images[pre],
        y_pre=labels[pre],
        X_train=shifted[train],
        y_train=labels[train] - 5,
        X_test=shifted[test],
        y_test=labels[test] - 5,
    )
