"""Where the views look and in which order: spherical-uniform sampling (SUS) and
latitude-guided scanning (LGS), the two rules that turn a panorama into a video (Sec. 3).

SUS spreads the views uniformly over the sphere instead of over-sampling the poles; LGS starts at
the equator and moves ring by ring to higher latitudes so that consecutive frames overlap.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from paperkit import check_choice, check_int, check_real
from st360d.geometry import check_fov, check_views

__all__ = ["cubemap_views", "latlon_grid_views", "lgs_order", "sus_views"]

#: Tolerance of the ring count ⌈n₀ cos φ − tol⌉ (12 cos 60° = 6.000000000000001 in float64).
RING_TOL = 1e-9
ORDERS = ("lgs", "lgs_single", "raster", "random")


def _rings(fov_deg: float, overlap: float) -> tuple[list[float], int]:
    step = fov_deg * (1.0 - overlap)
    k = int(math.floor(90.0 / step + 1e-9))
    lats = [r * step for r in range(k, -k - 1, -1)]
    if lats[0] < 90.0 - 1e-9:
        lats = [90.0, *lats, -90.0]
    n0 = int(math.ceil(360.0 / step - RING_TOL))
    return lats, n0


def _ring_views(lat: float, n: int, odd: bool) -> list[list[float]]:
    step = 360.0 / n
    out = []
    for k in range(n):
        lon = -180.0 + step / 2 + k * step + (step / 2 if odd else 0.0)
        lon = (lon + 180.0) % 360.0 - 180.0
        out.append([lon, lat])
    out.sort(key=lambda x: x[0])
    return out


def sus_views(fov_deg: float = 90.0, overlap: float = 0.5) -> np.ndarray:
    """Spherical-uniform sampling: views ``(T, 2)`` of ``[lon_deg, lat_deg]``, north to south.

    Latitude rings ``φ_r = r Δφ`` (``|φ_r| ≤ 90°``) with ``Δφ = FoV (1 − overlap)`` (50 %
    vertical overlap by default), plus the ±90° rings when the outermost ring stops short of a
    pole. Ring r gets ``n_r = max(1, ⌈n₀ cos φ_r − 1e-9⌉)`` views with
    ``n₀ = ⌈360° / (FoV (1 − overlap))⌉`` on the equator, evenly spaced in longitude, odd rings
    offset by half a step. The view density per unit area of the sphere is then about constant
    (a lat-lon grid with n₀ views on every ring over-samples the poles by ``1/cos φ``).
    FoV 90° gives 8 + 2·6 + 2·1 = 22 views, 60° gives 48, 120° gives 14.
    """
    fov = check_fov(fov_deg, "sus_views")
    ov = check_real("overlap", "sus_views", overlap, low=0.0, high=0.9)
    lats, n0 = _rings(fov, ov)
    step = fov * (1.0 - ov)
    views: list[list[float]] = []
    for lat in lats:
        n = max(1, int(math.ceil(n0 * math.cos(math.radians(lat)) - RING_TOL)))
        odd = n > 1 and int(round(abs(lat) / step)) % 2 == 1
        views += _ring_views(lat, n, odd)
    return np.asarray(views, dtype=np.float64)


def latlon_grid_views(fov_deg: float = 90.0, overlap: float = 0.5) -> np.ndarray:
    """The baseline of SUS: the same rings, each with the equator's n₀ views (a lat-lon grid;
    the poles keep one view, as more views at one direction add nothing)."""
    fov = check_fov(fov_deg, "latlon_grid_views")
    ov = check_real("overlap", "latlon_grid_views", overlap, low=0.0, high=0.9)
    lats, n0 = _rings(fov, ov)
    views: list[list[float]] = []
    for lat in lats:
        views += _ring_views(lat, 1 if abs(abs(lat) - 90.0) < 1e-9 else n0, False)
    return np.asarray(views, dtype=np.float64)


def cubemap_views() -> np.ndarray:
    """The six cube faces as views (front, right, back, left, up, down) for FoV 90°."""
    return np.array(
        [[0.0, 0.0], [90.0, 0.0], [-180.0, 0.0], [-90.0, 0.0], [0.0, 90.0], [0.0, -90.0]]
    )


def _lon_dist(a: float, b: np.ndarray) -> np.ndarray:
    return np.abs((b - a + 180.0) % 360.0 - 180.0)


def _sweep(ring: np.ndarray, lons: np.ndarray, start_lon: float | None) -> list[int]:
    """Indices of one ring in increasing longitude, starting at the view nearest ``start_lon``
    (at the smallest longitude when None), wrapping around."""
    by_lon = ring[np.argsort(lons[ring], kind="stable")]
    if start_lon is None:
        first = 0
    else:
        first = int(np.argmin(_lon_dist(start_lon, lons[by_lon])))
    return [int(i) for i in np.roll(by_lon, -first)]


def lgs_order(views: Any, order: str = "lgs", seed: int = 0) -> list[np.ndarray]:
    """Frame order of a view set: one index array per clip (Sec. 3, latitude-guided scanning).

    ``"lgs"``: two clips sharing the equator sweep, ``N = [equator, +Δφ, …, north pole]`` and
    ``S = [equator, −Δφ, …, south pole]`` (one clip cannot visit both hemispheres without a
    2Δφ jump across the equator). The equator is swept in increasing longitude from its smallest
    longitude; each next ring starts at the view whose longitude is nearest the previous frame's
    and keeps the sweep direction, so consecutive frames overlap.
    ``"lgs_single"``: one clip, equator, +Δφ, −Δφ, +2Δφ, …; ``"raster"``: one clip, north to
    south ring by ring, each from its smallest longitude; ``"random"``: one random permutation.
    """
    v = check_views(views, "lgs_order").numpy()
    check_choice("order", "lgs_order", order, ORDERS)
    seed = check_int("seed", "lgs_order", seed, low=0)
    T = v.shape[0]
    if order == "random":
        return [np.random.default_rng(seed).permutation(T)]
    lons, lats = v[:, 0], v[:, 1]
    keys = np.round(lats, 6)
    ring_lats = sorted(set(keys.tolist()))
    rings = {lat: np.flatnonzero(keys == lat) for lat in ring_lats}
    if order == "raster":
        seq: list[int] = []
        for lat in sorted(ring_lats, reverse=True):
            seq += _sweep(rings[lat], lons, None)
        return [np.asarray(seq, dtype=np.int64)]
    eq_lat = min(ring_lats, key=abs)
    equator = _sweep(rings[eq_lat], lons, None)

    def chain(ring_seq: list[float], start: list[int]) -> list[int]:
        seq = list(start)
        for lat in ring_seq:
            seq += _sweep(rings[lat], lons, float(lons[seq[-1]]))
        return seq

    north = sorted((x for x in ring_lats if x > eq_lat), key=abs)
    south = sorted((x for x in ring_lats if x < eq_lat), key=abs)
    if order == "lgs":
        clips = [chain(north, equator)]
        if south:
            clips.append(chain(south, equator))
        return [np.asarray(c, dtype=np.int64) for c in clips]
    alternating: list[float] = []
    for k in range(max(len(north), len(south))):
        alternating += [*north[k : k + 1], *south[k : k + 1]]
    return [np.asarray(chain(alternating, equator), dtype=np.int64)]
