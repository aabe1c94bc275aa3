"""Synthetic driving scenes where camera and LiDAR must be fused (the setting of Sec. 4).

Each scene is a three-lane road (lane width 3.5 m, centreline y = c x^2) seen from the ego car at
the origin, heading +x at speed v. Objects are axis-aligned boxes:

- *obstacles* (class 4): static debris, in a lane ahead or on the shoulder;
- *vehicles* (class 3): lead cars in a lane ahead, driving away faster than the ego car, and cars
  parked on the shoulder.

LiDAR gives geometry without class: an occupancy and a height raster (heights of both classes
overlap). The camera gives class without depth: a 360-degree panorama rendered by casting one ray
per column and colouring the band of the first box it hits (its range is not rendered). A static
obstacle in the path calls for a swerve or a stop, a faster lead car does not, so a planner needs
both sensors to know which occupied cells block it.

The expert (rule-based) follows the commanded lane (0 left, 1 straight, 2 right) at constant
speed; when an obstacle blocks that lane it swerves to the nearest free lane, else brakes to stop
3 m short of it. Scenes whose expert would collide, leave the road or brake harder than 4 m/s^2
are redrawn, so the expert scores NC = DAC = 1 on every scene.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from skimage.draw import polygon

from paperkit import check_int, check_real, param_error

__all__ = ["CLASSES", "make_driving_scenes"]

#: BEV semantic classes (index = label).
CLASSES = ("empty", "road", "lane", "vehicle", "obstacle")
LANE_W = 3.5
ROAD_HALF = 1.5 * LANE_W
DT = 0.5  # seconds between waypoints
N_WAYPOINTS = 8
MAX_OBJECTS = 8
EGO_HALF = (2.0, 0.9)  # half length, half width of the ego footprint (metres)
COLOURS = {0: (0.25, 0.45, 0.8), 3: (0.9, 0.15, 0.15), 4: (0.95, 0.85, 0.1)}
MAX_DECEL = 4.0


def _lane_y(offset: float, curv: float, x):
    return offset + curv * np.asarray(x) ** 2


def _expert(v, curv, command, boxes):
    """Waypoints (8, 2) of the rule-based expert and whether it had to brake."""
    t = DT * np.arange(1, N_WAYPOINTS + 1)
    target = {0: LANE_W, 1: 0.0, 2: -LANE_W}[command]
    static = [b for b in boxes if b[4] == 0.0 and b[0] > 0 and abs(b[1]) < ROAD_HALF + 0.5]

    def blocked(lane):
        return [
            b for b in static if abs(b[1] - _lane_y(lane, curv, b[0])) < LANE_W / 2 + b[3] + 0.6
        ]

    lanes = sorted((LANE_W, 0.0, -LANE_W), key=lambda lane: (abs(lane - target), -lane))
    chosen, stop_at = None, None
    for lane in lanes:
        if not blocked(lane):
            chosen = lane
            break
    x = v * t
    if chosen is None:  # every lane blocked: brake in the target lane before the nearest box
        chosen = target
        first = min(blocked(target), key=lambda b: b[0])
        stop_at = first[0] - first[2] - EGO_HALF[0] - 3.0
        if stop_at <= 1.0:
            return None
        decel = v * v / (2 * stop_at)
        if decel > MAX_DECEL:
            return None
        t_stop = v / decel
        tc = np.minimum(t, t_stop)
        x = v * tc - 0.5 * decel * tc**2
    s = np.clip(t / 3.0, 0.0, 1.0)
    y = chosen * 0.5 * (1 - np.cos(math.pi * s)) + curv * x**2
    return np.stack([x, y], -1), stop_at is not None


def _boxes_raster(boxes, hw, extent, value_of):
    """Rasterise boxes (cx, cy, hl, hw, ...) onto an (H, W) grid; later boxes overwrite."""
    h, w = hw
    out = np.zeros(hw, dtype=np.float32)
    for b in boxes:
        xs = np.array([b[0] - b[2], b[0] + b[2], b[0] + b[2], b[0] - b[2]])
        ys = np.array([b[1] - b[3], b[1] - b[3], b[1] + b[3], b[1] + b[3]])
        rows = (xs + extent) * h / (2 * extent) - 0.5
        cols = (ys + extent) * w / (2 * extent) - 0.5
        rr, cc = polygon(rows, cols, shape=hw)
        if rr.size == 0:  # thinner than a cell: mark the cell holding the centre
            r = int((b[0] + extent) * h / (2 * extent))
            c = int((b[1] + extent) * w / (2 * extent))
            if 0 <= r < h and 0 <= c < w:
                rr, cc = np.array([r]), np.array([c])
        out[rr, cc] = value_of(b)
    return out


def _render_camera(boxes, curv, rng, cam_hw=(32, 128)):
    """Panorama (3, Hc, Wc): column u looks at azimuth pi - (u + 1/2) 2 pi / Wc (left edge = +y
    side behind, centre = straight ahead). The middle band shows the class colour of the first
    box hit by the column's ray (no range); the lower band shows road or verge at 6 m."""
    hc, wc = cam_hw
    az = math.pi - (np.arange(wc) + 0.5) * 2 * math.pi / wc
    d = np.stack([np.cos(az), np.sin(az)], -1)  # (Wc, 2)
    hit_t = np.full(wc, np.inf)
    hit_cls = np.zeros(wc, dtype=int)
    with np.errstate(divide="ignore", invalid="ignore"):
        for b in boxes:
            lo = np.array([b[0] - b[2], b[1] - b[3]])
            hi = np.array([b[0] + b[2], b[1] + b[3]])
            t1, t2 = lo / d, hi / d
            tmin = np.nanmax(np.minimum(t1, t2), -1)
            tmax = np.nanmin(np.maximum(t1, t2), -1)
            hit = (tmax >= np.maximum(tmin, 0)) & (tmin < hit_t)
            hit_t = np.where(hit, np.maximum(tmin, 0), hit_t)
            hit_cls = np.where(hit, int(b[5]), hit_cls)
    img = np.zeros((3, hc, wc), dtype=np.float32)
    band = slice(hc * 5 // 16, hc * 11 // 16)
    img[:, band] = np.array([COLOURS[c] for c in hit_cls], dtype=np.float32).T[:, None, :]
    gx, gy = 6.0 * d[:, 0], 6.0 * d[:, 1]
    road = np.abs(gy - curv * gx**2) <= ROAD_HALF
    ground = np.where(road[None], np.array([[0.5], [0.5], [0.5]]), np.array([[0.2], [0.6], [0.2]]))
    img[:, hc * 11 // 16 :] = ground[:, None, :]
    img += rng.normal(0, 0.05, img.shape).astype(np.float32)
    return img


def _draw_scene(rng):
    v = rng.uniform(4.0, 10.0)
    curv = rng.uniform(-0.003, 0.003)
    command = int(rng.choice(3, p=[0.25, 0.5, 0.25]))
    boxes = []  # cx, cy, half length, half width, vx, class, height

    def in_lane(lane, x, hl, hw, vx, cls, height):
        boxes.append((x, _lane_y(lane, curv, x), hl, hw, vx, cls, height))

    for _ in range(rng.integers(0, 3)):  # static obstacles in lanes ahead
        in_lane(
            rng.choice((LANE_W, 0.0, -LANE_W)),
            rng.uniform(10, 30),
            rng.uniform(0.4, 1.2),
            rng.uniform(0.4, 1.2),
            0.0,
            4,
            rng.uniform(0.8, 1.8),
        )
    for _ in range(rng.integers(0, 3)):  # lead vehicles driving away
        in_lane(
            rng.choice((LANE_W, 0.0, -LANE_W)),
            rng.uniform(8, 30),
            2.2,
            0.9,
            v + rng.uniform(2.0, 4.0),
            3,
            rng.uniform(1.2, 1.9),
        )
    for _ in range(rng.integers(0, 4)):  # parked cars and debris on the shoulders
        side = rng.choice((-1.0, 1.0))
        cls = int(rng.choice((3, 4), p=(0.7, 0.3)))
        hl, hw = (2.2, 0.9) if cls == 3 else (rng.uniform(0.4, 1.2), rng.uniform(0.4, 1.2))
        in_lane(
            side * (ROAD_HALF + hw + rng.uniform(0.3, 1.5)),
            rng.uniform(-28, 28),
            hl,
            hw,
            0.0,
            cls,
            rng.uniform(0.8, 1.9),
        )
    return v, curv, command, boxes[:MAX_OBJECTS]


def make_driving_scenes(
    n: int, seed: int, bev_hw: tuple[int, int] = (64, 64), extent: float = 32.0
) -> dict[str, torch.Tensor]:
    """``n`` scenes (module docstring) as tensors:

    - ``lidar`` (n, 2, H, W): occupancy and height (metres) of every box, no class;
    - ``camera`` (n, 3, 32, 128): the class-coloured panorama, no range;
    - ``bev_sem`` (n, H, W) int64 in {0 empty, 1 road, 2 lane, 3 vehicle, 4 obstacle};
    - ``drivable`` (n, H, W) bool: the road surface;
    - ``expert`` (n, 8, 2): the expert's waypoints every 0.5 s (metres, ego frame);
    - ``ego`` (n, 4): (vx, vy, ax, ay) of the ego car; ``command`` (n,) int64: 0 left,
      1 straight, 2 right;
    - ``agents`` (n, 8, 6): (cx, cy, half length, half width, vx, class) per box, class 0 = none;
    - ``obstacles`` (n, 8, 5): (cx, cy, half length, half width, vx) for the collision check
      (absent boxes placed far away);
    - ``extent`` (): the half-size of the square grid, metres.

    Deterministic for a given ``seed``.
    """
    owner = "make_driving_scenes"
    n = check_int("n", owner, n, low=1, high=200_000)
    seed = check_int("seed", owner, seed, low=0)
    try:
        h, w = bev_hw
    except (TypeError, ValueError) as exc:
        raise param_error("bev_hw", owner, "a pair (H, W)", repr(bev_hw), cls=TypeError) from exc
    h = check_int("bev_hw", owner, h, low=8, high=512)
    w = check_int("bev_hw", owner, w, low=8, high=512)
    extent = check_real("extent", owner, extent, low=8.0, high=200.0)
    from gaussianfusion.metrics import scene_scores

    rng = np.random.default_rng(seed)
    xs = -extent + (np.arange(h) + 0.5) * 2 * extent / h
    ys = -extent + (np.arange(w) + 0.5) * 2 * extent / w
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    out = {
        k: []
        for k in (
            "lidar",
            "camera",
            "bev_sem",
            "drivable",
            "expert",
            "ego",
            "command",
            "agents",
            "obstacles",
        )
    }
    while len(out["expert"]) < n:
        v, curv, command, boxes = _draw_scene(rng)
        plan = _expert(v, curv, command, boxes)
        if plan is None:
            continue
        wp, _ = plan
        road = np.abs(gy - curv * gx**2) <= ROAD_HALF
        obst = np.full((MAX_OBJECTS, 5), [1e4, 1e4, 0.0, 0.0, 0.0], dtype=np.float32)
        agents = np.zeros((MAX_OBJECTS, 6), dtype=np.float32)
        for i, b in enumerate(boxes):
            obst[i] = b[:5]
            agents[i] = b[:6]
        ok = scene_scores(
            torch.from_numpy(wp[None]).float(),
            torch.from_numpy(obst[None]),
            torch.from_numpy(road[None]),
            extent,
        )
        if not (ok["nc"].item() == 1.0 and ok["dac"].item() == 1.0):
            continue
        occupancy = _boxes_raster(boxes, (h, w), extent, lambda b: 1.0)
        height = _boxes_raster(boxes, (h, w), extent, lambda b: b[6])
        keep = rng.random((h, w)) > 0.05  # LiDAR dropout
        clutter = rng.random((h, w)) < 0.005  # spurious returns
        lidar = np.stack([occupancy * keep + clutter, height * keep + 0.3 * clutter])
        sem = np.where(road, 1, 0)
        for div in (-LANE_W / 2, LANE_W / 2):
            sem = np.where(np.abs(gy - curv * gx**2 - div) < 0.5, 2, sem)
        cls = _boxes_raster(boxes, (h, w), extent, lambda b: b[5])
        sem = np.where(cls > 0, cls, sem)
        out["lidar"].append(lidar.astype(np.float32))
        out["camera"].append(_render_camera(boxes, curv, rng))
        out["bev_sem"].append(sem.astype(np.int64))
        out["drivable"].append(road)
        out["expert"].append(wp.astype(np.float32))
        out["ego"].append(np.array([v, 0.0, 0.0, 0.0], dtype=np.float32))
        out["command"].append(command)
        out["agents"].append(agents)
        out["obstacles"].append(obst)
    scenes = {k: torch.from_numpy(np.stack(v)) for k, v in out.items() if k != "command"}
    scenes["command"] = torch.tensor(out["command"], dtype=torch.int64)
    scenes["extent"] = torch.tensor(extent)
    return scenes
