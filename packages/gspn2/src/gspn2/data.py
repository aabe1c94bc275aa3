"""Image data for the small classification experiment.

- :func:`load_digits_images`: scikit-learn's 1,797 handwritten digits (8×8, shipped with the
  library), scaled to [0, 1] and upsampled bilinearly to 16×16; a fixed stratified 75/25 split.
- :func:`load_fashion_mnist`: Fashion-MNIST from the four IDX gzip files in a folder (the layout of
  the official release), for a larger run.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from paperkit import check_int, check_memory, check_real

__all__ = ["load_digits_images", "load_fashion_mnist"]

Split = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


#: Images in scikit-learn's digits set.
N_DIGITS = 1797


def _check_size(owner: str, size: object, images: int) -> int:
    """An image side whose float32 images (and a resized copy) fit in memory."""
    size = check_int("size", owner, size, low=1)
    return check_memory("size", owner, size, 2 * 4 * images * size * size)


def load_digits_images(size: int = 16, test_fraction: float = 0.25) -> Split:
    """(x_train, y_train, x_test, y_test): float32 images (n, 1, size, size) and int64 labels."""
    owner = "load_digits_images"
    size = _check_size(owner, size, N_DIGITS)
    test_fraction = check_real(
        "test_fraction", owner, test_fraction, low=0, high=1, low_open=True, high_open=True
    )
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = torch.tensor(digits.images / 16.0, dtype=torch.float32).unsqueeze(1)
    if size != 8:
        images = F.interpolate(images, size=(size, size), mode="bilinear", align_corners=False)
    labels = torch.tensor(digits.target, dtype=torch.int64)
    idx_train, idx_test = train_test_split(
        np.arange(len(labels)), test_size=test_fraction, stratify=digits.target, random_state=0
    )
    return images[idx_train], labels[idx_train], images[idx_test], labels[idx_test]


def _read_idx(path: Path) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_fashion_mnist(root: str | Path, size: int = 28) -> Split:
    """(x_train, y_train, x_test, y_test) of Fashion-MNIST in ``root`` (train-images-idx3-ubyte.gz,
    train-labels-idx1-ubyte.gz, t10k-…): images in [0, 1], resized to ``size`` when it is not 28."""
    size = _check_size("load_fashion_mnist", size, 70_000)
    root = Path(root)
    names = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz")
    names += ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
    missing = [n for n in names if not (root / n).is_file()]
    if missing:
        raise FileNotFoundError(f"Fashion-MNIST files {missing} not found in {root}.")
    arrays = [_read_idx(root / n) for n in names]
    out = []
    for images, labels in (arrays[:2], arrays[2:]):
        x = torch.tensor(images, dtype=torch.float32).unsqueeze(1) / 255.0
        if size != 28:
            x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
        out += [x, torch.tensor(labels, dtype=torch.int64)]
    return tuple(out)
