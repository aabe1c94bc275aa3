"""Synthetic bird's-eye-view (BEV) tracking sequences, the small-scale stand-in for nuScenes.

Objects move with constant velocity plus Gaussian velocity noise on a ``grid x grid`` map of
``cell``-metre cells; they are born and die, leave the map, are occluded (absent from the raster
for 1-3 frames while staying in the ground truth, the nuScenes evaluation convention for annotated
but hidden objects), and clutter blobs (single cells with no size) appear as false evidence.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_int, check_memory, check_real

__all__ = ["make_bev_sequences", "rasterize"]

#: Side lengths of the boxes in metres (uniform).
SIZE_RANGE = (1.0, 3.0)
#: Speed of the objects in metres per frame (uniform) and the velocity noise std.
SPEED_RANGE = (0.3, 1.2)
VELOCITY_NOISE = 0.1


def rasterize(objects: list[dict[str, Any]], grid: int, cell: float) -> np.ndarray:
    """Render boxes into a ``(2, grid, grid)`` raster: channel 0 is the occupancy of each
    rotated box (cells whose centre lies inside it, at least the cell of its centre), channel 1
    the box area w*l / 9 on those cells. Objects with ``"clutter": True`` fill one cell with
    occupancy 1 and area 0."""
    out = np.zeros((2, grid, grid), dtype=np.float32)
    centres = (np.arange(grid) + 0.5) * cell
    xx, yy = np.meshgrid(centres, centres, indexing="xy")  # [row=y, col=x]
    for obj in objects:
        cx, cy = obj["center"]
        col, row = int(cx // cell), int(cy // cell)
        if obj.get("clutter"):
            if 0 <= row < grid and 0 <= col < grid:
                out[0, row, col] = 1.0
            continue
        w, l_ = obj["size"]
        c, s = np.cos(obj["heading"]), np.sin(obj["heading"])
        dx, dy = xx - cx, yy - cy
        along, across = dx * c + dy * s, -dx * s + dy * c
        inside = (np.abs(along) <= l_ / 2) & (np.abs(across) <= w / 2)
        if 0 <= row < grid and 0 <= col < grid:
            inside[row, col] = True
        out[0][inside] = 1.0
        out[1][inside] = np.maximum(out[1][inside], w * l_ / 9.0)
    return out


def make_bev_sequences(
    n_seq: int,
    n_frames: int = 10,
    grid: int = 32,
    cell: float = 1.0,
    max_objects: int = 8,
    birth: float = 0.1,
    death: float = 0.05,
    occlusion: float = 0.1,
    clutter: float = 0.05,
    seed: int = 0,
) -> tuple[np.ndarray, list[list[list[dict[str, Any]]]]]:
    """Draw ``n_seq`` BEV tracking sequences.

    Each sequence starts with between 2 and ``max_objects // 2 + 1`` objects; per frame every
    free object slot (up to ``max_objects`` alive) gives birth with probability ``birth``, every
    object dies with probability ``death`` or when its centre leaves the map, and a visible object
    becomes occluded with probability ``occlusion`` for 1-3 frames. Each of ``max_objects``
    clutter slots fires with probability ``clutter`` per frame. Positions follow
    ``x_{t+1} = x_t + v_t``, ``v_{t+1} = v_t + N(0, 0.1^2 I)``; heading = direction of ``v``.

    Returns:
        rasters: ``(n_seq, n_frames, 2, grid, grid)`` float32 (occupancy, area channel).
        gt: ``gt[i][t]`` is the list of objects alive in frame t of sequence i, each a dict with
            ``id`` (int, unique within the sequence, persistent while the object lives),
            ``center`` (2,) and ``size`` (w, l) in metres, ``heading`` (rad), ``label`` (0) and
            ``visible`` (False while occluded: absent from the raster, still ground truth).
    """
    owner = "make_bev_sequences"
    n_seq = check_int("n_seq", owner, n_seq, low=1, high=100_000)
    n_frames = check_int("n_frames", owner, n_frames, low=1, high=1000)
    grid = check_int("grid", owner, grid, low=8, high=512)
    cell = check_real("cell", owner, cell, low=0, low_open=True, high=100)
    max_objects = check_int("max_objects", owner, max_objects, low=1, high=100)
    for name, p in (("birth", birth), ("death", death), ("occlusion", occlusion)):
        check_real(name, owner, p, low=0, high=1)
    clutter = check_real("clutter", owner, clutter, low=0, high=1)
    seed = check_int("seed", owner, seed, low=0)
    check_memory("n_seq", owner, n_seq, 4.0 * n_seq * n_frames * 2 * grid * grid)
    rng = np.random.default_rng(seed)
    extent = grid * cell
    rasters = np.zeros((n_seq, n_frames, 2, grid, grid), dtype=np.float32)
    gt: list[list[list[dict[str, Any]]]] = []
    for i in range(n_seq):
        movers: list[dict[str, Any]] = []
        next_id = 0

        def spawn() -> dict[str, Any]:
            nonlocal next_id
            speed = rng.uniform(*SPEED_RANGE)
            angle = rng.uniform(-np.pi, np.pi)
            mover = {
                "id": next_id,
                "pos": rng.uniform(0.15 * extent, 0.85 * extent, size=2),
                "vel": speed * np.array([np.cos(angle), np.sin(angle)]),
                "size": rng.uniform(*SIZE_RANGE, size=2),
                "hidden": 0,
            }
            next_id += 1
            return mover

        movers = [spawn() for _ in range(int(rng.integers(2, max_objects // 2 + 2)))]
        movers = movers[:max_objects]
        frames = []
        for t in range(n_frames):
            if t > 0:
                for a in movers:
                    a["pos"] = a["pos"] + a["vel"]
                    a["vel"] = a["vel"] + rng.normal(0.0, VELOCITY_NOISE, size=2)
                    a["hidden"] = max(a["hidden"] - 1, 0)
                alive = [
                    a
                    for a in movers
                    if rng.random() >= death and np.all((a["pos"] >= 0) & (a["pos"] < extent))
                ]
                movers = alive + [
                    spawn() for _ in range(max_objects - len(alive)) if rng.random() < birth
                ]
                for a in movers:
                    if a["hidden"] == 0 and rng.random() < occlusion:
                        a["hidden"] = int(rng.integers(1, 4))
            objs = [
                {
                    "id": a["id"],
                    "center": a["pos"].copy(),
                    "size": a["size"].copy(),
                    "heading": float(np.arctan2(a["vel"][1], a["vel"][0])),
                    "label": 0,
                    "visible": a["hidden"] == 0,
                }
                for a in movers
            ]
            shown = [o for o in objs if o["visible"]]
            n_clutter = int(rng.binomial(max_objects, clutter))
            shown += [
                {"center": rng.uniform(0, extent, size=2), "clutter": True}
                for _ in range(n_clutter)
            ]
            rasters[i, t] = rasterize(shown, grid, cell)
            frames.append(objs)
        gt.append(frames)
    return rasters, gt
