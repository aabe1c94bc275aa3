"""The synthetic object vocabulary (shape x colour x pattern) and the scene renderer.

The paper's scenes are photographs and Unreal Engine 5 renders of real objects (Sec. 3); here an
object type is a triple (shape, colour, pattern), named in natural language ("red striped star";
the solid pattern is left unnamed: "red star"). 8 shapes x 8 colours x 3 patterns = 192 types.
A scene is drawn object by object with bounding-box-local numpy masks; the renderer also returns
the per-object label map (which object owns each pixel after occlusion), from which visibility is
checked: every object keeps at least ``MIN_VISIBLE`` pixels (placements that would leave any object
below it are re-drawn).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from paperkit import check_int, describe, param_error

__all__ = [
    "COLOURS",
    "MIN_VISIBLE",
    "PATTERNS",
    "SHAPES",
    "VOCAB",
    "attributes",
    "object_name",
    "render_scene",
]

SHAPES = ("circle", "square", "triangle", "star", "hexagon", "diamond", "cross", "crescent")
COLOURS = {
    "red": (220, 40, 40),
    "green": (40, 170, 60),
    "blue": (40, 80, 220),
    "yellow": (235, 215, 40),
    "purple": (140, 50, 180),
    "orange": (245, 140, 20),
    "cyan": (40, 200, 215),
    "pink": (245, 130, 190),
}
PATTERNS = ("solid", "striped", "dotted")
#: Fewest pixels of an object that must stay visible in its scene (Sec. 3: objects are visible).
MIN_VISIBLE = 30


def object_name(shape: str, colour: str, pattern: str) -> str:
    """Natural-language name of a type: ``"red striped star"``; solid ones read ``"red star"``."""
    return f"{colour} {shape}" if pattern == "solid" else f"{colour} {pattern} {shape}"


#: Every object type, in a fixed order (the detector's class index).
VOCAB: tuple[str, ...] = tuple(
    object_name(s, c, p) for s in SHAPES for c in COLOURS for p in PATTERNS
)
_ATTRS = {object_name(s, c, p): (s, c, p) for s in SHAPES for c in COLOURS for p in PATTERNS}


def attributes(name: str) -> tuple[str, str, str] | None:
    """``(shape, colour, pattern)`` of a vocabulary name, or None for a name outside it."""
    return _ATTRS.get(name)


@dataclass(frozen=True)
class Placement:
    """Where one object is drawn: centre (pixels), radius (pixels), rotation (radians)."""

    cy: float
    cx: float
    r: float
    theta: float


def _polygon(shape: str) -> np.ndarray | None:
    """Unit-radius vertices (angle, radius) of the polygonal shapes; None for the curved ones."""
    if shape == "square":
        k = np.arange(4)
        return np.stack([np.pi / 4 + k * np.pi / 2, np.full(4, 1.0)], 1)
    if shape == "triangle":
        k = np.arange(3)
        return np.stack([-np.pi / 2 + k * 2 * np.pi / 3, np.full(3, 1.0)], 1)
    if shape == "hexagon":
        k = np.arange(6)
        return np.stack([k * np.pi / 3, np.full(6, 1.0)], 1)
    if shape == "diamond":
        return np.array([[0, 1.0], [np.pi / 2, 0.6], [np.pi, 1.0], [3 * np.pi / 2, 0.6]])
    if shape == "star":
        k = np.arange(10)
        return np.stack([-np.pi / 2 + k * np.pi / 5, np.where(k % 2 == 0, 1.0, 0.42)], 1)
    return None


def _inside_polygon(u: np.ndarray, v: np.ndarray, verts: np.ndarray) -> np.ndarray:
    """Even-odd rule for points (u, v) against the closed polygon ``verts`` (V, 2) in (u, v)."""
    inside = np.zeros(u.shape, dtype=bool)
    x0, y0 = verts[-1]
    for x1, y1 in verts:
        crosses = (y1 > v) != (y0 > v)
        with np.errstate(divide="ignore", invalid="ignore"):
            xint = x0 + (v - y0) * (x1 - x0) / (y1 - y0)
        inside ^= crosses & (u < xint)
        x0, y0 = x1, y1
    return inside


def _shape_mask(shape: str, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Mask of a unit-radius shape at rotated, normalised coordinates (u, v)."""
    if shape == "circle":
        return u * u + v * v <= 1.0
    if shape == "cross":
        return ((np.abs(u) <= 0.33) & (np.abs(v) <= 1.0)) | (
            (np.abs(v) <= 0.33) & (np.abs(u) <= 1.0)
        )
    if shape == "crescent":
        return (u * u + v * v <= 1.0) & ((u - 0.45) ** 2 + v * v > 0.62)
    poly = _polygon(shape)
    verts = np.stack([poly[:, 1] * np.cos(poly[:, 0]), poly[:, 1] * np.sin(poly[:, 0])], 1)
    return _inside_polygon(u, v, verts)


def _object_patch(
    name: str, p: Placement, size: int
) -> tuple[slice, slice, np.ndarray, np.ndarray]:
    """Bounding-box slices, mask (h, w) and colours (h, w, 3) of one placed object."""
    shape, colour, pattern = _ATTRS[name]
    y0, y1 = max(0, int(p.cy - p.r) - 1), min(size, int(math.ceil(p.cy + p.r)) + 2)
    x0, x1 = max(0, int(p.cx - p.r) - 1), min(size, int(math.ceil(p.cx + p.r)) + 2)
    yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    dy, dx = (yy + 0.5 - p.cy) / p.r, (xx + 0.5 - p.cx) / p.r
    c, s = math.cos(p.theta), math.sin(p.theta)
    u, v = c * dx + s * dy, -s * dx + c * dy
    mask = _shape_mask(shape, u, v)
    base = np.asarray(COLOURS[colour], dtype=np.float32)
    rgb = np.broadcast_to(base, (*mask.shape, 3)).copy()
    dark = 0.35 * base
    if pattern == "striped":  # stripes across the object's own axis: rotate with it
        period = max(3.0, p.r / 2.5)
        band = np.floor((u * p.r) / (period / 2)).astype(int) % 2 == 1
        rgb[band] = dark
    elif pattern == "dotted":
        period = max(4.0, p.r / 2.2)
        gu = (u * p.r) / period - np.round((u * p.r) / period)
        gv = (v * p.r) / period - np.round((v * p.r) / period)
        rgb[(gu * gu + gv * gv) < 0.09] = dark
    return slice(y0, y1), slice(x0, x1), mask, rgb


def render_scene(
    names: list[str],
    rng: np.random.Generator,
    size: int = 128,
    max_tries: int = 60,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``names`` into one ``size x size`` RGB scene with a random background.

    Each object gets a random centre, radius (a fraction of ``size`` that shrinks for crowded
    scenes), rotation and the order it is drawn in (later objects occlude earlier ones). A
    placement that would leave any object with fewer than :data:`MIN_VISIBLE` visible pixels is
    re-drawn (up to ``max_tries`` times per object; then the whole scene is re-drawn).

    Returns ``(image (size, size, 3) uint8, labels (size, size) int16)``: ``labels[y, x]`` is the
    index in ``names`` of the object owning the pixel, -1 for background.
    """
    owner = "render_scene"
    if isinstance(names, str) or not isinstance(names, (list, tuple)) or not names:
        raise param_error(
            "names", owner, "a non-empty list of vocabulary names", describe(names), cls=TypeError
        )
    unknown = sorted({str(v) for v in names if v not in _ATTRS})
    if unknown or len(set(names)) != len(names):
        raise param_error("names", owner, "distinct names from VOCAB", unknown or "duplicates")
    if not isinstance(rng, np.random.Generator):
        raise param_error("rng", owner, "a numpy.random.Generator", describe(rng), cls=TypeError)
    size = check_int("size", owner, size, low=32, high=2048)
    max_tries = check_int("max_tries", owner, max_tries, low=1, high=10_000)
    if len(names) > 16:
        raise param_error("names", owner, "at most 16 objects", f"{len(names)} objects")
    n = len(names)
    crowd = 1.0 if n <= 7 else 0.75
    r_lo, r_hi = 0.07 * size * crowd, 0.12 * size * crowd
    for _ in range(20):
        labels = np.full((size, size), -1, dtype=np.int16)
        counts = np.zeros(n, dtype=np.int64)
        patches = []
        ok = True
        for k, name in enumerate(names):
            for _try in range(max_tries):
                r = rng.uniform(r_lo, r_hi)
                p = Placement(
                    cy=rng.uniform(r * 0.6, size - r * 0.6),
                    cx=rng.uniform(r * 0.6, size - r * 0.6),
                    r=r,
                    theta=rng.uniform(0, 2 * np.pi),
                )
                sy, sx, mask, rgb = _object_patch(name, p, size)
                own = int(mask.sum())
                if own < MIN_VISIBLE:
                    continue
                covered = labels[sy, sx][mask]
                lost = np.bincount(covered[covered >= 0], minlength=n)
                if np.all(counts[:k] - lost[:k] >= MIN_VISIBLE):
                    counts[:k] -= lost[:k]
                    counts[k] = own
                    labels[sy, sx][mask] = k
                    patches.append((sy, sx, mask, rgb))
                    break
            else:
                ok = False
                break
        if ok:
            break
    else:  # pragma: no cover - needs an impossible crowd; the sizes above never reach it
        raise RuntimeError(f"could not place {n} objects in a {size}x{size} scene")
    bg = rng.uniform(70, 200) * np.ones(3) + rng.uniform(-25, 25, 3)
    ramp = np.linspace(-1.0, 1.0, size, dtype=np.float32)
    direction = rng.uniform(-12, 12, 2)
    shade = direction[0] * ramp[:, None] + direction[1] * ramp[None, :]
    image = np.clip(bg[None, None, :] + shade[..., None], 0, 255).astype(np.float32)
    for sy, sx, mask, rgb in patches:
        region = image[sy, sx]
        region[mask] = rgb[mask]
    noise = rng.normal(0.0, 4.0, image.shape).astype(np.float32)
    return np.clip(image + noise, 0, 255).astype(np.uint8), labels
