"""Synthetic shadow scenes with continuous ground-truth opacity (a toy stand-in for FSD).

Each scene is a textured ground plane seen from above (noise, stripes, checker or a gradient, in
random colours) lit by a directional light; up to ``max_occluders`` convex polygons float above it
at heights h and cast their shadows, the polygon translated by h times the light's ground-plane
direction. Shadows are rendered with eq. (1) of :mod:`shadowopacity.physics`:

* area light (``soft``): the hard shadow is blurred by a disk of radius ``k h`` (the penumbra widens
  with the occluder-ground distance), so opacity falls continuously from umbra to lit;
* translucent occluders (``translucent``): opacity tau in [0.3, 0.9] times the hard/soft shadow, so
  alpha < 1 even in the umbra;
* overlapping shadows combine as ``alpha = 1 - prod_i (1 - alpha_i)``.

Everything is vectorised over the scenes (polygon rasterisation by half-plane tests; the disk blur
as one FFT product per occluder). The generator uses exactly the image model the method assumes,
which favours the opacity formulation by construction.
"""

from __future__ import annotations

import numpy as np
import torch

from paperkit import (
    Described,
    check_array,
    check_bool,
    check_int,
    check_memory,
    check_real,
    param_error,
)
from shadowopacity import _inputs
from shadowopacity.physics import T_MASK, _render

__all__ = ["binarize_dataset", "make_shadow_scenes", "polygon_mask"]

#: Penumbra radius per unit of occluder height (pixels of blur per pixel of height), area light.
SOFTNESS = 0.12
#: Occluder heights (pixels above the ground), as a fraction of the image size.
HEIGHTS = (0.05, 0.45)


def polygon_mask(vertices: np.ndarray, size: int) -> np.ndarray:
    """Rasterise convex polygons by half-plane tests at pixel centres: a pixel is inside when
    ``(v_{j+1} - v_j) x (p - v_j) >= 0`` for every edge j.

    Args:
        vertices: ``(P, V, 2)`` counter-clockwise vertices (x, y) in pixel units, V >= 3; the
            pixel (row i, column j) has its centre at (x, y) = (j + 0.5, i + 0.5).
        size: the image side (1 to 1024).

    Returns:
        ``(P, size, size)`` float32 masks, 1 inside (edges included).
    """
    vertices = check_array("vertices", "polygon_mask", vertices, ndim=3)
    if vertices.shape[1] < 3 or vertices.shape[2] != 2:
        raise param_error(
            "vertices", "polygon_mask", "of shape (P, V >= 3, 2)", Described(str(vertices.shape))
        )
    size = check_int("size", "polygon_mask", size, low=1, high=1024)
    return _polygon_mask(vertices.astype(np.float32), size)


def _polygon_mask(vertices: np.ndarray, size: int) -> np.ndarray:
    c = np.arange(size, dtype=np.float32) + 0.5
    x, y = c[None, :], c[:, None]
    v0 = vertices[..., :, None, None, :]
    v1 = np.roll(vertices, -1, axis=-2)[..., :, None, None, :]
    cross = (v1[..., 0] - v0[..., 0]) * (y - v0[..., 1]) - (v1[..., 1] - v0[..., 1]) * (
        x - v0[..., 0]
    )
    return (cross >= 0).all(axis=-3).astype(np.float32)


def _backgrounds(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """Textured shadow-free images (n, 3, size, size) in [0.25, 0.95]."""
    g = np.linspace(0.0, 1.0, size, dtype=np.float32)
    yy, xx = np.meshgrid(g, g, indexing="ij")
    kind = rng.integers(0, 4, n)
    c1 = rng.uniform(0.45, 0.95, (n, 3, 1, 1)).astype(np.float32)
    c2 = rng.uniform(0.25, 0.8, (n, 3, 1, 1)).astype(np.float32)
    theta = rng.uniform(0, np.pi, (n, 1, 1))
    freq = rng.uniform(2.0, 6.0, (n, 1, 1))
    proj = np.cos(theta) * xx + np.sin(theta) * yy
    stripes = 0.5 + 0.5 * np.sin(2 * np.pi * freq * proj)
    checker = ((np.floor(xx * freq) + np.floor(yy * freq)) % 2).astype(np.float32)
    gradient = (proj - proj.min(axis=(1, 2), keepdims=True)) / np.ptp(
        proj, axis=(1, 2), keepdims=True
    )
    low = rng.random((n, 4, 4)).astype(np.float32)
    noise = torch.nn.functional.interpolate(
        torch.from_numpy(low)[:, None], size=(size, size), mode="bilinear", align_corners=False
    )[:, 0].numpy()
    t = np.choose(kind[:, None, None], [noise, stripes, checker, gradient]).astype(np.float32)
    fine = rng.normal(0.0, 0.02, (n, 1, size, size)).astype(np.float32)
    return np.clip(c1 * t[:, None] + c2 * (1 - t[:, None]) + fine, 0.25, 0.95)


def _polygons(rng: np.random.Generator, shape: tuple[int, int], size: int) -> np.ndarray:
    """Random convex polygons (n, k, 6, 2) inside the image, counter-clockwise in (x, y)."""
    n, k = shape
    verts = 6
    centre = rng.uniform(0.2 * size, 0.8 * size, (n, k, 1, 2))
    radius = rng.uniform(0.12 * size, 0.28 * size, (n, k, 1))
    # spread the angles so that no polygon degenerates to a sliver: jittered regular polygon
    base = np.linspace(0, 2 * np.pi, verts, endpoint=False) + rng.uniform(0, 2 * np.pi, (n, k, 1))
    angles = base + rng.uniform(-0.35, 0.35, (n, k, verts))
    aspect = rng.uniform(0.6, 1.0, (n, k, 1))
    x = radius * np.cos(angles)
    y = radius * aspect * np.sin(angles)
    return centre + np.stack([x, y], axis=-1)  # increasing angle: counter-clockwise in (x, y)


def _disk_blur(hard: np.ndarray, radius: np.ndarray, pad: int) -> np.ndarray:
    """Blur each mask (n, k, S, S) (rasterised on a grid padded by ``pad``) by a normalised disk
    of its own radius (n, k), one FFT product per mask; returns the blurred masks."""
    side = hard.shape[-1]
    c = np.fft.fftfreq(side) * side
    d2 = c[:, None] ** 2 + c[None, :] ** 2
    r = radius[..., None, None]
    # antialiased disk: weight 1 inside r - 0.5, linear to 0 at r + 0.5; radius 0 -> delta
    kernel = np.clip(r + 0.5 - np.sqrt(d2), 0.0, 1.0)
    kernel = torch.from_numpy(
        (kernel / kernel.sum(axis=(-2, -1), keepdims=True)).astype(np.float32)
    )
    spec = torch.fft.rfft2(torch.from_numpy(hard)) * torch.fft.rfft2(kernel)
    return torch.fft.irfft2(spec, s=(side, side)).clamp(0.0, 1.0).numpy()


def make_shadow_scenes(
    n: int,
    size: int = 64,
    seed: int = 0,
    max_occluders: int = 3,
    soft: bool = True,
    translucent: bool = True,
) -> dict[str, torch.Tensor]:
    """Draw ``n`` scenes with continuous ground-truth opacity.

    Args:
        n: number of scenes (at most 100,000).
        size: image side in pixels (16 to 256).
        seed: seed of the numpy generator (same seed -> identical scenes).
        max_occluders: each scene has 1 to ``max_occluders`` occluders (1 to 8).
        soft: area light (penumbra radius 0.12 h, h the occluder height) instead of a point light.
        translucent: half of the occluders get opacity tau ~ U(0.3, 0.9) instead of 1.

    Returns:
        dict with ``image`` (n, 3, S, S) from eq. (1), ``shadow_free`` (n, 3, S, S), ``alpha``
        (n, 1, S, S) in [0, 1], ``rho`` (n, 3) in [0.2, 0.7], ``instance_ids`` (n, S, S) int64:
        the occluder (1..k) whose own shadow is the strongest at a pixel with alpha > 0.05, else 0.
    """
    owner = "make_shadow_scenes"
    n = check_int("n", owner, n, low=1, high=100_000)
    size = check_int("size", owner, size, low=16, high=256)
    seed = check_int("seed", owner, seed, low=0)
    max_occluders = check_int("max_occluders", owner, max_occluders, low=1, high=8)
    soft = check_bool("soft", owner, soft)
    translucent = check_bool("translucent", owner, translucent)
    pad = size // 4
    side = size + 2 * pad
    check_memory("n", owner, n, 4.0 * n * max_occluders * side * side * 6)
    rng = np.random.default_rng(seed)
    free = _backgrounds(rng, n, size)
    k = max_occluders
    present = np.arange(k)[None, :] < rng.integers(1, k + 1, (n, 1))
    poly = _polygons(rng, (n, k), size)
    height = rng.uniform(HEIGHTS[0] * size, HEIGHTS[1] * size, (n, k))
    theta = rng.uniform(0.0, 2 * np.pi, (n, 1))
    elevation_tan = rng.uniform(0.4, 1.0, (n, 1))  # ground shift per unit height
    shift = np.stack([np.cos(theta), np.sin(theta)], -1) * (height * elevation_tan)[..., None]
    hard = (
        _polygon_mask((poly + shift[:, :, None, :] + pad).astype(np.float32), side)
        * present[..., None, None]
    )
    if soft:
        radius = SOFTNESS * height
        alpha_i = _disk_blur(hard, radius, pad)
    else:
        alpha_i = hard
    alpha_i = alpha_i[..., pad : pad + size, pad : pad + size]
    if translucent:
        tau = np.where(rng.random((n, k)) < 0.5, rng.uniform(0.3, 0.9, (n, k)), 1.0)
        alpha_i = alpha_i * tau[..., None, None]
    alpha = 1.0 - np.prod(1.0 - alpha_i, axis=1, keepdims=True)
    ids = np.where(alpha[:, 0] > T_MASK, alpha_i.argmax(axis=1) + 1, 0)
    rho = rng.uniform(0.2, 0.7, (n, 3))
    free_t = torch.from_numpy(free)
    alpha_t = torch.from_numpy(alpha.astype(np.float32))
    rho_t = torch.from_numpy(rho.astype(np.float32))
    return {
        "image": _render(free_t, alpha_t, rho_t),
        "shadow_free": free_t,
        "alpha": alpha_t,
        "rho": rho_t,
        "instance_ids": torch.from_numpy(ids.astype(np.int64)),
    }


def binarize_dataset(alpha: torch.Tensor, thr: float = 0.5) -> torch.Tensor:
    """Binary labels ``1[alpha > thr]`` as float, mimicking the binary-mask data sets (SBU, ISTD)
    that a binary shadow detector is trained on."""
    alpha = _inputs.alpha_map("alpha", "binarize_dataset", alpha)
    thr = check_real("thr", "binarize_dataset", thr, low=0.0, high=1.0, high_open=True)
    return (alpha > thr).to(alpha.dtype)
