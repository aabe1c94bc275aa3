"""Synthetic panoramas with exact depth: analytic ray casting of box rooms.

A room is an axis-aligned box around the camera (at the origin) holding axis-aligned boxes and
spheres, with procedural textures and Lambertian shading. Every ERP pixel's range is the exact
ray-casting distance, so the whole ST²360D pipeline can be checked against ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from paperkit import check_int, param_error
from st360d.geometry import check_erp_hw, erp_rays

__all__ = ["Scene", "render_room"]


@dataclass(frozen=True)
class Scene:
    """A room seen from the origin.

    Attributes:
        room: ``(2, 3)`` lower and upper corners of the room (contains the origin).
        boxes: ``(B, 2, 3)`` lower and upper corners of the boxes.
        spheres: ``(S, 4)`` centre and radius of the spheres.
        colors: ``(1 + B + S, 3)`` albedo of the room, then the boxes, then the spheres.
        light: ``(3,)`` unit direction towards a distant light.
    """

    room: np.ndarray
    boxes: np.ndarray
    spheres: np.ndarray
    colors: np.ndarray
    light: np.ndarray

    def cast(self, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """First hit along rays ``o + t d`` from the origin (``d (N, 3)``, any length > 0).

        Returns ``t (N,)`` (the range when ``d`` is unit, the optical-axis depth when
        ``d = R r`` with unit z camera rays), the unit normals ``(N, 3)`` and the object ids.
        """
        d = np.asarray(d, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / d
            # room: exit distance (the origin is inside)
            far = np.where(d > 0, self.room[1] * inv, self.room[0] * inv)
            far = np.where(d == 0, np.inf, far)
            t = far.min(1)
            axis = far.argmin(1)
            normal = np.zeros_like(d)
            normal[np.arange(len(d)), axis] = -np.sign(d[np.arange(len(d)), axis])
            obj = np.zeros(len(d), dtype=np.int64)
            for b, (lo, hi) in enumerate(self.boxes):
                t1, t2 = lo * inv, hi * inv
                tn, tf = np.minimum(t1, t2), np.maximum(t1, t2)
                tn = np.where(d == 0, np.where((lo <= 0) & (hi >= 0), -np.inf, np.inf), tn)
                tf = np.where(d == 0, np.where((lo <= 0) & (hi >= 0), np.inf, -np.inf), tf)
                enter, leave = tn.max(1), tf.min(1)
                hit = (enter <= leave) & (enter > 0) & (enter < t)
                ax = tn.argmax(1)
                n = np.zeros_like(d)
                n[np.arange(len(d)), ax] = -np.sign(d[np.arange(len(d)), ax])
                t = np.where(hit, enter, t)
                normal = np.where(hit[:, None], n, normal)
                obj = np.where(hit, 1 + b, obj)
            a = (d * d).sum(1)
            for s, sph in enumerate(self.spheres):
                c, r = sph[:3], sph[3]
                bq = d @ c  # t² a − 2 t (d·c) + |c|² − r² = 0
                disc = bq * bq - a * (c @ c - r * r)
                root = (bq - np.sqrt(np.maximum(disc, 0.0))) / a
                hit = (disc > 0) & (root > 0) & (root < t)
                p = root[:, None] * d
                n = (p - c) / r
                t = np.where(hit, root, t)
                normal = np.where(hit[:, None], n, normal)
                obj = np.where(hit, 1 + len(self.boxes) + s, obj)
        return t, normal, obj

    def shade(self, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Colour ``(N, 3)`` in [0, 1] and hit parameter ``t (N,)`` along rays ``d``: albedo times a
        procedural texture (checker + stripes of the hit point) times Lambertian shading."""
        t, n, obj = self.cast(d)
        p = t[:, None] * d
        check = (np.floor(p * 2.0).sum(1) % 2) * 0.25 + 0.75
        stripe = 0.9 + 0.1 * np.sin(9.0 * p[:, 0] + 7.0 * p[:, 1] + 5.0 * p[:, 2])
        lam = 0.35 + 0.65 * np.clip(n @ self.light, 0.0, 1.0)
        rgb = self.colors[obj] * (check * stripe * lam)[:, None]
        return np.clip(rgb, 0.0, 1.0), t


def _random_scene(rng: np.random.Generator, n_boxes: int, n_spheres: int) -> Scene:
    lo = -rng.uniform([2.0, 1.2, 2.0], [4.0, 1.8, 4.0])
    hi = rng.uniform([2.0, 1.0, 2.0], [4.0, 1.6, 4.0])
    boxes, spheres = [], []
    while len(boxes) < n_boxes:
        size = rng.uniform([0.3, 0.3, 0.3], [1.2, 1.4, 1.2])
        corner = rng.uniform(lo, hi - size)
        corner[1] = lo[1]  # on the floor
        b = np.stack([corner, corner + size])
        gap = np.maximum(np.maximum(b[0], -b[1]), 0.0)  # per axis, origin to box
        if np.linalg.norm(gap) > 0.5:
            boxes.append(b)
    while len(spheres) < n_spheres:
        r = rng.uniform(0.2, 0.5)
        c = rng.uniform(lo + r + 0.05, hi - r - 0.05)
        if np.linalg.norm(c) > r + 0.6:
            spheres.append(np.r_[c, r])
    colors = rng.uniform(0.25, 1.0, size=(1 + n_boxes + n_spheres, 3))
    light = rng.normal(size=3)
    light[1] = abs(light[1]) + 1.0
    return Scene(
        room=np.stack([lo, hi]),
        boxes=np.asarray(boxes, dtype=np.float64).reshape(-1, 2, 3),
        spheres=np.asarray(spheres, dtype=np.float64).reshape(-1, 4),
        colors=colors,
        light=light / np.linalg.norm(light),
    )


def render_room(
    seed: int = 0, erp_hw: tuple[int, int] = (256, 512), n_boxes: int = 4, n_spheres: int = 2
) -> dict:
    """A random room rendered as an ERP panorama with its exact range map.

    Returns ``dict(rgb=(H, W, 3) float32 in [0, 1], range=(H, W) float32, scene=Scene)``; the
    range is the distance from the camera (the origin) to the first hit along each pixel ray.
    """
    seed = check_int("seed", "render_room", seed, low=0)
    H, W = check_erp_hw(erp_hw, "render_room")
    n_boxes = check_int("n_boxes", "render_room", n_boxes, low=0, high=32)
    n_spheres = check_int("n_spheres", "render_room", n_spheres, low=0, high=32)
    if H > 4096:
        raise param_error("erp_hw", "render_room", "at most 4096 rows", (H, W))
    scene = _random_scene(np.random.default_rng(seed), n_boxes, n_spheres)
    d = erp_rays(H, W).reshape(-1, 3).numpy()
    rgb, t = scene.shade(d)
    return {
        "rgb": torch.from_numpy(rgb.reshape(H, W, 3).astype(np.float32)),
        "range": torch.from_numpy(t.reshape(H, W).astype(np.float32)),
        "scene": scene,
    }
