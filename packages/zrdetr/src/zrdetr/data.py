r"""Synthetic anatomy scenes: the default data of the reproduction (the paper's fetal ultrasound
benchmarks cannot be downloaded here).

K structures follow one fixed template (a topology: which structure lies where, at what size,
relative to which), jittered per image, rendered as textured ellipses with multiplicative
speckle. A zoom factor :math:`z` rescales the whole layout by :math:`z` about a random centre
:math:`c` and the frame crops it: a template point :math:`p` lands at :math:`0.5+z(p-c)`. Boxes
are clipped to the frame; a structure with less than half of its box visible is absent, one cut
by the frame is flagged ``truncated``. Domain ``"target"`` changes the gain, the speckle, the
blur and the intensity histogram (a second scanner).

The generator applies zoom exactly as the zoom embedding assumes and draws layouts from one
template that a relation prior can fit: both modules are favoured by construction.
"""

from __future__ import annotations

import numpy as np
import torch

from paperkit import check_choice, check_int, check_memory, check_real, param_error

__all__ = ["make_anatomy_scenes", "template"]


def template(n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixed layout: centres (K, 2) and sizes (K, 2) in the reference frame (z = 1),
    drawn once from a fixed seed so that every call shares it."""
    rng = np.random.default_rng(20250)
    angle = 2 * np.pi * np.arange(n_classes) / n_classes + rng.uniform(-0.3, 0.3, n_classes)
    radius = rng.uniform(0.16, 0.26, n_classes)
    centres = 0.5 + radius[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    sizes = rng.uniform(0.11, 0.22, (n_classes, 2))
    return centres, sizes


def _box_filter(images: np.ndarray) -> np.ndarray:
    """3 x 3 mean filter with edge padding over the last two axes."""
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1)), mode="edge")
    H, W = images.shape[1:]
    return sum(padded[:, i : i + H, j : j + W] for i in range(3) for j in range(3)) / 9.0


def make_anatomy_scenes(
    n: int,
    image_size: int = 64,
    n_classes: int = 6,
    zoom_range: tuple[float, float] = (0.8, 1.25),
    domain: str = "source",
    seed: int = 0,
) -> dict[str, torch.Tensor]:
    r"""``n`` scenes of ``n_classes`` structures, zoom log-uniform in ``zoom_range``.

    Returns a dict of tensors: ``images`` (n, 1, S, S) float32 in [0, 1], ``boxes`` (n, K, 4)
    ``(cx, cy, w, h)`` clipped to the frame (absent structures keep their unclipped box),
    ``labels`` (n, K) int64 (= arange(K)), ``present`` (n, K) bool, ``truncated`` (n, K) bool,
    ``zoom`` (n,) float32.
    """
    owner = "make_anatomy_scenes"
    n = check_int("n", owner, n, low=1)
    image_size = check_int("image_size", owner, image_size, low=16, high=1024)
    n_classes = check_int("n_classes", owner, n_classes, low=2, high=32)
    check_memory("n", owner, n, 4.0 * n * image_size**2 * 6)
    domain = check_choice("domain", owner, domain, ("source", "target"))
    seed = check_int("seed", owner, seed, low=0)
    if not isinstance(zoom_range, (tuple, list)) or len(zoom_range) != 2:
        raise param_error("zoom_range", owner, "a pair (low, high)", zoom_range, cls=TypeError)
    lo = check_real("zoom_range", owner, zoom_range[0], low=0.05, high=20, low_open=True)
    hi = check_real("zoom_range", owner, zoom_range[1], low=lo, high=20)
    rng = np.random.default_rng(seed)
    K, S = n_classes, image_size
    centres, sizes = template(K)
    zoom = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    shift = rng.normal(0.0, 0.03, (n, 1, 2))
    ctr = centres[None] + shift + rng.normal(0.0, 0.015, (n, K, 2))
    size = sizes[None] * np.exp(rng.normal(0.0, 0.08, (n, K, 2)))
    focus = 0.5 + rng.uniform(-0.08, 0.08, (n, 1, 2))  # the centre c the zoom acts about
    ctr = 0.5 + zoom[:, None, None] * (ctr - focus)
    size = size * zoom[:, None, None]
    lo_xy = np.clip(ctr - size / 2, 0, 1)
    hi_xy = np.clip(ctr + size / 2, 0, 1)
    vis = np.prod(np.clip(hi_xy - lo_xy, 0, None), -1) / np.prod(size, -1)
    present = vis >= 0.5
    truncated = present & (vis < 1 - 1e-9)
    boxes = np.where(
        present[..., None],
        np.concatenate([(lo_xy + hi_xy) / 2, hi_xy - lo_xy], -1),
        np.concatenate([ctr, size], -1),
    )
    # rendering: background tissue, then structures in class order (later ones on top)
    grid = (np.arange(S) + 0.5) / S
    X, Y = grid[None, None, :], grid[None, :, None]
    images = np.full((n, S, S), 0.25) + 0.05 * np.sin(
        2 * np.pi * (X * 3 + rng.uniform(0, 1, (n, 1, 1)))
    )
    level = 0.45 + 0.5 * (np.arange(K) % 3) / 2  # three intensity levels
    freq = 2.0 + 2.0 * (np.arange(K) // 3)  # texture frequency in the structure's own frame
    for k in range(K):
        cx, cy = ctr[:, k, 0, None, None], ctr[:, k, 1, None, None]
        w, h = size[:, k, 0, None, None], size[:, k, 1, None, None]
        u, v = (X - cx) / (w / 2), (Y - cy) / (h / 2)
        inside = u**2 + v**2 <= 1
        texture = 0.12 * np.sin(np.pi * freq[k] * (u + v))
        images = np.where(inside, level[k] + texture, images)
    speckle = rng.gamma(4.0, 1 / 4.0, images.shape)  # multiplicative, mean 1
    if domain == "target":
        speckle = rng.gamma(2.0, 1 / 2.0, images.shape)
        images = _box_filter(images * speckle)
        images = np.clip(1.3 * images + 0.05, 0, None) ** 1.6
    else:
        images = images * speckle
    images = np.clip(images + rng.normal(0, 0.03, images.shape), 0, 1)
    return {
        "images": torch.as_tensor(images[:, None], dtype=torch.float32),
        "boxes": torch.as_tensor(boxes, dtype=torch.float32),
        "labels": torch.arange(K).expand(n, K).clone(),
        "present": torch.as_tensor(present),
        "truncated": torch.as_tensor(truncated),
        "zoom": torch.as_tensor(zoom, dtype=torch.float32),
    }
