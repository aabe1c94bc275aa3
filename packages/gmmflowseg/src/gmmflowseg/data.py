r"""Synthetic data sets with a known, multimodal annotation distribution.

``make_ambiguous_lesions``: a low-contrast elliptic blob with soft borders in speckle noise,
labelled by annotators of four styles (modes): 0 exact, 1 dilated, 2 eroded, 3 "missed" (an
empty mask). An annotator of style 3 misses the lesion with probability 0.5 when it is faint
(contrast below the median of the contrast range) and labels it exactly (mode 0) otherwise; the
styles of annotators ``a`` are ``a % 4``. This mirrors the LIDC setting of the paper (four
radiologists who disagree on borders and on faint nodules) with modes known by construction.

``make_cracks``: a random-walk crack with one or two faint branches on a textured background;
annotator styles differ in line width (1 or 3 pixels) and in whether they label the faint
branches (Crack500-like curvilinear structures).

>>> d = make_ambiguous_lesions(3, size=16, seed=0)
>>> d["images"].shape, d["masks"].shape, d["modes"].shape
((3, 1, 16, 16), (3, 4, 16, 16), (3, 4))
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from paperkit import check_int

__all__ = ["make_ambiguous_lesions", "make_cracks"]

EXACT, DILATED, ERODED, MISSED = 0, 1, 2, 3
MAX_PIXELS = 1 << 28


def _check(owner: str, n: int, size: int, n_annotators: int, seed: int, min_size: int):
    n = check_int("n", owner, n, low=1, high=10**6)
    size = check_int("size", owner, size, low=min_size, high=4096)
    n_annotators = check_int("n_annotators", owner, n_annotators, low=1, high=64)
    seed = check_int("seed", owner, seed, low=0)
    if n * (n_annotators + 4) * size * size > MAX_PIXELS:
        check_int("n", owner, n, high=MAX_PIXELS // ((n_annotators + 4) * size * size))
    return n, size, n_annotators, np.random.default_rng(seed)


def make_ambiguous_lesions(
    n: int, size: int = 32, n_annotators: int = 4, seed: int = 0
) -> dict[str, np.ndarray]:
    """``n`` lesion images with ``n_annotators`` annotations each.

    Returns ``images`` (N, 1, H, W) float32 (zero-mean noise plus the blob), ``masks``
    (N, A, H, W) uint8 in {0, 1}, ``modes`` (N, A) int64 (the style each annotation was drawn
    with: 0 exact, 1 dilated, 2 eroded, 3 missed) and ``contrast`` (N,) float32.
    Deterministic in ``seed``. NaN policy: no float inputs.
    """
    n, size, n_annotators, rng = _check("make_ambiguous_lesions", n, size, n_annotators, seed, 8)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64) + 0.5
    width = max(1, round(size / 16))  # dilation / erosion radius in pixels
    disk = ndimage.generate_binary_structure(2, 1)
    images = np.empty((n, 1, size, size), np.float32)
    masks = np.empty((n, n_annotators, size, size), np.uint8)
    modes = np.empty((n, n_annotators), np.int64)
    contrast = rng.uniform(0.6, 1.4, n).astype(np.float32)
    for i in range(n):
        cy, cx = rng.uniform(0.3, 0.7, 2) * size
        ry, rx = rng.uniform(0.15, 0.28, 2) * size
        theta = rng.uniform(0, np.pi)
        dy, dx = yy - cy, xx - cx
        u = dy * np.cos(theta) + dx * np.sin(theta)
        v = -dy * np.sin(theta) + dx * np.cos(theta)
        exact = (u / ry) ** 2 + (v / rx) ** 2 <= 1.0
        soft = ndimage.gaussian_filter(exact.astype(np.float64), sigma=0.08 * size)
        speckle = rng.normal(0, 0.35, (size, size)) * (1 + 0.5 * rng.random((size, size)))
        images[i, 0] = contrast[i] * soft / max(soft.max(), 1e-9) + speckle
        faint = contrast[i] < 1.0
        for a in range(n_annotators):
            style = a % 4
            if style == MISSED and not (faint and rng.random() < 0.5):
                style = EXACT
            if style == DILATED:
                m = ndimage.binary_dilation(exact, disk, iterations=width)
            elif style == ERODED:
                m = ndimage.binary_erosion(exact, disk, iterations=width)
            elif style == MISSED:
                m = np.zeros_like(exact)
            else:
                m = exact
            masks[i, a], modes[i, a] = m, style
    return {"images": images, "masks": masks, "modes": modes, "contrast": contrast}


def _walk(rng, size: int, start: np.ndarray, angle: float, length: int) -> list[tuple[int, int]]:
    """Pixels of a random walk with a slowly turning heading."""
    pts, pos = [], start.astype(np.float64)
    for _ in range(length):
        angle += rng.normal(0, 0.25)
        pos = pos + np.array([np.sin(angle), np.cos(angle)])
        r, c = int(round(pos[0])), int(round(pos[1]))
        if not (0 <= r < size and 0 <= c < size):
            break
        pts.append((r, c))
    return pts


def make_cracks(
    n: int, size: int = 64, n_annotators: int = 4, seed: int = 0
) -> dict[str, np.ndarray]:
    """``n`` crack images with ``n_annotators`` annotations each.

    A main crack crosses the image left to right (a random walk); one or two faint branches
    leave it. Annotator style ``a % 4``: 0 thin with branches, 1 thick with branches, 2 thin
    without, 3 thick without. Returns ``images`` (N, 1, H, W) float32, ``masks``
    (N, A, H, W) uint8, ``modes`` (N, A) int64. Deterministic in ``seed``. NaN policy: no float
    inputs.
    """
    n, size, n_annotators, rng = _check("make_cracks", n, size, n_annotators, seed, 16)
    images = np.empty((n, 1, size, size), np.float32)
    masks = np.empty((n, n_annotators, size, size), np.uint8)
    modes = np.empty((n, n_annotators), np.int64)
    cross = ndimage.generate_binary_structure(2, 1)
    for i in range(n):
        main = np.zeros((size, size), bool)
        branch = np.zeros((size, size), bool)
        path = _walk(rng, size, np.array([rng.uniform(0.2, 0.8) * size, 0.0]), 0.0, 4 * size)
        for r, c in path:
            main[r, c] = True
        for _ in range(rng.integers(1, 3)):
            if not path:
                break
            r, c = path[rng.integers(len(path))]
            side = rng.choice([-1.0, 1.0]) * rng.uniform(0.6, 1.2)
            for rr, cc in _walk(rng, size, np.array([r, c]), side, size // 3):
                branch[rr, cc] = True
        branch &= ~main
        texture = ndimage.gaussian_filter(rng.normal(0, 1, (size, size)), 1.5)
        img = 0.5 + 0.15 * texture - 0.6 * main - 0.25 * branch
        images[i, 0] = ndimage.gaussian_filter(img, 0.6) + rng.normal(0, 0.05, (size, size))
        for a in range(n_annotators):
            style = a % 4
            m = main | branch if style < 2 else main
            if style % 2 == 1:
                m = ndimage.binary_dilation(m, cross)
            masks[i, a], modes[i, a] = m, style
    return {"images": images, "masks": masks, "modes": modes}
