"""Data: sklearn's bundled digits upsampled to 16x16, synthetic proxy shapes, and the same-label
calibration minibatch (the paper's TE is computed on one minibatch of images sharing a label).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from paperkit import check_int, check_real, check_tensor, param_error

__all__ = ["digits16", "same_label_batch", "shapes8x8", "upsample"]

SHAPES = ("bar", "ring", "cross", "blob")


def upsample(images: torch.Tensor, size: int = 16) -> torch.Tensor:
    """Bilinear resize of ``(B, C, H, W)`` images to ``size x size`` (``align_corners=False``).

    NaN policy: NaN or infinite pixels are refused.
    """
    check_tensor("images", "upsample", images, ndim=4)
    size = check_int("size", "upsample", size, low=1, high=1024)
    return F.interpolate(images, size=(size, size), mode="bilinear", align_corners=False)


def digits16(seed: int = 0, test_size: float = 0.3) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """sklearn's digits (1797 8x8 images, bundled) scaled to [0, 1] and upsampled bilinearly to
    16x16, split stratified into ``{"train": (X, y), "test": (X, y)}``; X ``(n, 1, 16, 16)``.

    >>> d = digits16()
    >>> d["train"][0].shape[1:], int(d["train"][1].max())
    (torch.Size([1, 16, 16]), 9)
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    seed = check_int("seed", "digits16", seed, low=0)
    test_size = check_real(
        "test_size", "digits16", test_size, low=0, high=1, low_open=True, high_open=True
    )
    data = load_digits()
    x = torch.tensor(data.images / 16.0, dtype=torch.float32)[:, None]
    x = upsample(x, 16)
    y = torch.tensor(data.target, dtype=torch.int64)
    idx = np.arange(len(y))
    train, test = train_test_split(
        idx, test_size=test_size, stratify=data.target, random_state=seed
    )
    return {"train": (x[train], y[train]), "test": (x[test], y[test])}


def _shape(kind: str, rng: np.random.Generator) -> np.ndarray:
    yy, xx = np.mgrid[0:8, 0:8].astype(np.float64)
    cy, cx = rng.uniform(2.5, 4.5, size=2)
    if kind == "bar":
        angle = rng.uniform(0, np.pi)
        dist = np.abs((xx - cx) * np.sin(angle) - (yy - cy) * np.cos(angle))
        img = np.exp(-(dist**2) / (2 * rng.uniform(0.4, 0.8) ** 2))
    elif kind == "ring":
        r = np.hypot(xx - cx, yy - cy)
        img = np.exp(-((r - rng.uniform(2.0, 3.0)) ** 2) / (2 * 0.5**2))
    elif kind == "cross":
        w = rng.uniform(0.4, 0.7)
        img = np.maximum(
            np.exp(-((xx - cx) ** 2) / (2 * w**2)), np.exp(-((yy - cy) ** 2) / (2 * w**2))
        )
    else:
        s = rng.uniform(1.0, 1.8)
        img = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * s**2))
    img = img + 0.05 * rng.standard_normal((8, 8))
    img = np.clip(img, 0, None)
    return img / img.max()


def shapes8x8(n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` synthetic 8x8 proxy images in [0, 1] (no download): bars, rings, crosses and blobs
    at random positions, widths and angles with a little noise, cycling through the four kinds.
    Returns images ``(n, 1, 8, 8)`` float32 and labels ``(n,)`` (0 bar, 1 ring, 2 cross, 3 blob).

    >>> x, y = shapes8x8(8, seed=1)
    >>> tuple(x.shape), y.tolist()[:4], float(x.max()) <= 1.0
    ((8, 1, 8, 8), [0, 1, 2, 3], True)
    """
    n = check_int("n", "shapes8x8", n, low=1, high=1_000_000)
    seed = check_int("seed", "shapes8x8", seed, low=0)
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % len(SHAPES)
    images = np.stack([_shape(SHAPES[k], rng) for k in labels])
    return torch.tensor(images[:, None], dtype=torch.float32), torch.tensor(labels)


def same_label_batch(
    images: torch.Tensor,
    labels: torch.Tensor,
    label: int | None = None,
    batch_size: int = 32,
    seed: int = 0,
) -> tuple[torch.Tensor, int]:
    """The calibration minibatch: ``batch_size`` images drawn (seeded, without replacement) from
    those of class ``label`` (default: the most frequent class, the smallest on ties). Returns
    ``(images[idx], label)``; all of that class when it has fewer than ``batch_size``.

    NaN policy: NaN or infinite pixels are refused.

    >>> x, y = shapes8x8(40)
    >>> batch, c = same_label_batch(x, y, batch_size=4)
    >>> tuple(batch.shape), c
    ((4, 1, 8, 8), 0)
    """
    owner = "same_label_batch"
    dims: dict[str, Any] = {}
    check_tensor("images", owner, images, shape=("B", None, None, None), dims=dims)
    check_tensor("labels", owner, labels, shape=("B",), dims=dims, dtype="int")
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=100_000)
    seed = check_int("seed", owner, seed, low=0)
    if bool((labels < 0).any()):
        raise param_error("labels", owner, "non-negative class labels", "a negative label")
    counts = torch.bincount(labels)
    if label is None:
        label = int(torch.argmax(counts))
    label = check_int("label", owner, label, low=0)
    idx = torch.nonzero(labels == label).flatten()
    if idx.numel() == 0:
        raise param_error("label", owner, "a label present in 'labels'", label)
    gen = torch.Generator().manual_seed(seed)
    idx = idx[torch.randperm(idx.numel(), generator=gen)[:batch_size]]
    return images[idx], label
