import gzip
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from gspn2.data import load_digits_images, load_fashion_mnist

# The official Fashion-MNIST release (four IDX gzip files), when a folder holding it is named.
FASHION = os.environ.get("GSPN2_FASHION_MNIST")


def test_digits_split():
    x_train, y_train, x_test, y_test = load_digits_images()
    assert x_train.shape == (1347, 1, 16, 16) and x_test.shape == (450, 1, 16, 16)
    assert x_train.min() >= 0 and x_train.max() <= 1
    assert set(y_test.tolist()) == set(range(10))  # stratified: every class in the test split
    assert torch.equal(load_digits_images()[3], y_test)  # a fixed split


def _write_idx(path: Path, array: np.ndarray) -> None:
    header = bytes([0, 0, 8, array.ndim]) + b"".join(n.to_bytes(4, "big") for n in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def test_fashion_mnist_reader(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (5, 28, 28))
    labels = rng.integers(0, 10, 5)
    for split in ("train", "t10k"):
        _write_idx(tmp_path / f"{split}-images-idx3-ubyte.gz", images)
        _write_idx(tmp_path / f"{split}-labels-idx1-ubyte.gz", labels)
    x_train, y_train, x_test, _ = load_fashion_mnist(tmp_path, size=16)
    assert x_train.shape == (5, 1, 16, 16) and x_test.shape == (5, 1, 16, 16)
    assert y_train.tolist() == labels.tolist()
    full = load_fashion_mnist(tmp_path)[0]
    assert torch.allclose(full[:, 0] * 255, torch.tensor(images, dtype=torch.float32))


def test_fashion_mnist_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-images"):
        load_fashion_mnist(tmp_path)


@pytest.mark.skipif(FASHION is None, reason="set GSPN2_FASHION_MNIST to a Fashion-MNIST folder")
def test_fashion_mnist_real_files():
    x_train, y_train, x_test, y_test = load_fashion_mnist(FASHION)
    assert x_train.shape == (60000, 1, 28, 28) and x_test.shape == (10000, 1, 28, 28)
    assert y_train.bincount().tolist() == [6000] * 10
