"""Natural images: scikit-learn's digits (real) and dead-leaves images (synthetic).

The paper's in-distribution (ID) data are natural photographs; here the natural sets are
(i) the 1,797 scikit-learn digits (8x8 scans, bundled with scikit-learn), upsampled bilinearly,
and (ii) dead-leaves images: occluding disks with power-law radii, the classic model whose
scale-invariant statistics (1/f^2 power spectrum, sharp edges) match those of natural images.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from scipy import ndimage

from paperkit import check_int

__all__ = ["load_digits_images", "make_dead_leaves"]


def load_digits_images(size: int = 16) -> np.ndarray:
    """The 1,797 scikit-learn digits as images ``(1797, 1, size, size)`` in ``[0, 1]``.

    Pixels ``/16`` (the scans' 17 grey levels), then bilinear upsampling from 8x8 to
    ``size x size`` (``align_corners=False``). ``size`` in [8, 64].

    >>> X = load_digits_images(16)
    >>> X.shape, float(X.min()) >= 0.0, float(X.max()) <= 1.0
    ((1797, 1, 16, 16), True, True)
    """
    from sklearn.datasets import load_digits

    size = check_int("size", "load_digits_images", size, low=8, high=64)
    images = torch.from_numpy(load_digits().images.astype(np.float32) / 16.0)[:, None]
    up = F.interpolate(images, size=(size, size), mode="bilinear", align_corners=False)
    return up.clamp_(0.0, 1.0).numpy()


def _power_law_radii(rng: np.random.Generator, n: int, r_min: float, r_max: float) -> np.ndarray:
    """Radii with density proportional to r^-3 on [r_min, r_max] (inverse-CDF sampling)."""
    u = rng.random(n)
    a, b = r_min**-2, r_max**-2
    return (a - u * (a - b)) ** -0.5


def make_dead_leaves(
    n: int,
    size: int = 32,
    seed: int = 0,
    *,
    disks: int = 300,
    blur: float = 0.5,
    noise: float = 0.01,
) -> np.ndarray:
    """``n`` dead-leaves images ``(n, 1, size, size)`` in ``[0, 1]``.

    Each image is a stack of ``disks`` opaque disks drawn back to front: centres uniform on the
    image, radii with density proportional to r^-3 on [1, 16] px (scale invariance), grey levels
    uniform on [0, 1]; then a Gaussian blur of std ``blur`` px (optics) and Gaussian sensor noise of
    std ``noise``, clipped to [0, 1]. The background (visible where no disk falls, about
    exp(-disks * 17.5 / size^2) of the area) has its own uniform grey level.

    >>> X = make_dead_leaves(4, size=16, seed=1)
    >>> X.shape, bool(((X >= 0) & (X <= 1)).all())
    ((4, 1, 16, 16), True)
    """
    owner = "make_dead_leaves"
    n = check_int("n", owner, n, low=1, high=100_000)
    size = check_int("size", owner, size, low=8, high=128)
    seed = check_int("seed", owner, seed, low=0)
    disks = check_int("disks", owner, disks, low=1, high=10_000)
    from paperkit import check_real

    blur = check_real("blur", owner, blur, low=0, high=10)
    noise = check_real("noise", owner, noise, low=0, high=1)
    rng = np.random.default_rng(seed)
    img = np.repeat(rng.random((n, 1, 1)), size, axis=1).repeat(size, axis=2).astype(np.float32)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) + 0.5
    for _ in range(disks):
        cy, cx = rng.random((2, n, 1, 1)).astype(np.float32) * size
        r = _power_law_radii(rng, n, 1.0, 16.0).astype(np.float32)[:, None, None]
        grey = rng.random((n, 1, 1)).astype(np.float32)
        inside = (yy - cy) ** 2 + (xx - cx) ** 2 <= r**2
        np.copyto(img, np.broadcast_to(grey, img.shape), where=inside)
    if blur > 0:
        img = ndimage.gaussian_filter(img, sigma=(0, blur, blur), mode="reflect")
    img = img + noise * rng.standard_normal(img.shape).astype(np.float32)
    return np.clip(img, 0.0, 1.0)[:, None].astype(np.float32)
