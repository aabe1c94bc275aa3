"""Synthetic SAMA-Bench instances: coloured shapes that move, and conversations about them.

Each video shows 1..``max_objects`` shapes on a noisy grey background. An object has a colour
(unique in its video), a shape (circle, square, diamond), a size (small, large) and an action
(moving left/right/up/down, static, growing, bouncing); its mask is the shape's pixels in every
frame. The conversation mixes the turn kinds of SAMA-Bench (paper Sec. 3-4):

* referring: "What is <mask> doing?" -> "The <p>red circle</p> [SEG] is moving left.";
  "How big is <mask>?"; "How do <mask> and <mask> move?";
* grounded description: "Describe what happens in the video." -> one grounded sentence per object;
* grounding: "Which object is growing?" (only when the action is unique);
* follow-up about an object referred earlier: "What about the circle you described before?".

Every answer carries at least one ``[SEG]``. About 6 % of the turns are made inconsistent on
purpose (one ``<mask>`` too many, or a ``[SEG]`` missing) so that the loader's filtering is
exercised; they are counted, not scored. Subsets cycle over the names of the benchmark's sources
(MeViS, LV-VIS, Ref-YouTube-VOS, VidSTG): labels only, the videos are all synthetic.
"""

from __future__ import annotations

import numpy as np

from paperkit import check_int, check_memory
from sama.schema import Region, Turn, VideoRecord

__all__ = ["ACTIONS", "COLORS", "SHAPES", "SUBSETS", "make_synthetic_bench"]

COLORS = {
    "red": (220, 40, 40),
    "green": (40, 180, 60),
    "blue": (40, 80, 220),
    "yellow": (230, 210, 40),
    "purple": (150, 60, 180),
    "orange": (240, 140, 30),
    "cyan": (40, 200, 210),
    "white": (240, 240, 240),
}
SHAPES = ("circle", "square", "diamond")
ACTIONS = (
    "moving left",
    "moving right",
    "moving up",
    "moving down",
    "static",
    "growing",
    "bouncing",
)
SUBSETS = ("MeViS", "LV-VIS", "Ref-YouTube-VOS", "VidSTG")
#: Share of turns made inconsistent on purpose (filtered by the loader).
P_INVALID = 0.06


def _shape_mask(shape: str, cx: float, cy: float, r: float, size: int) -> np.ndarray:
    yy, xx = np.mgrid[0:size, 0:size]
    dx, dy = xx - cx, yy - cy
    if shape == "circle":
        return dx * dx + dy * dy <= r * r
    if shape == "square":
        return (np.abs(dx) <= r * 0.85) & (np.abs(dy) <= r * 0.85)
    return np.abs(dx) + np.abs(dy) <= r * 1.15


def _object(rng: np.random.Generator, colour: str, T: int, size: int) -> dict:
    scale = size / 64.0
    big = bool(rng.random() < 0.5)
    r = (rng.uniform(9, 12) if big else rng.uniform(5.5, 7.5)) * scale
    action = ACTIONS[int(rng.integers(len(ACTIONS)))]
    travel = 1.3 * scale * (T - 1)
    lo, hi = r + 1, size - r - 1
    cx, cy = rng.uniform(lo, hi), rng.uniform(lo, hi)
    if action == "moving left":
        cx = rng.uniform(min(lo + travel, hi), hi)
    elif action == "moving right":
        cx = rng.uniform(lo, max(hi - travel, lo))
    elif action == "moving up":
        cy = rng.uniform(min(lo + travel, hi), hi)
    elif action == "moving down":
        cy = rng.uniform(lo, max(hi - travel, lo))
    elif action == "bouncing":
        cy = rng.uniform(min(lo + 8 * scale, hi), hi)
    shape = SHAPES[int(rng.integers(len(SHAPES)))]
    masks = np.zeros((T, size, size), bool)
    step = 1.3 * scale
    for t in range(T):
        x, y, rt = cx, cy, r
        if action == "moving left":
            x = cx - step * t
        elif action == "moving right":
            x = cx + step * t
        elif action == "moving up":
            y = cy - step * t
        elif action == "moving down":
            y = cy + step * t
        elif action == "growing":
            rt = r * (0.7 + 0.6 * t / max(T - 1, 1))
        elif action == "bouncing":
            y = cy - 8 * scale * abs(np.sin(np.pi * t / 5))
        masks[t] = _shape_mask(shape, x, y, rt, size)
    return {
        "colour": colour,
        "shape": shape,
        "size": "large" if big else "small",
        "action": action,
        "masks": masks,
        "desc": f"{colour} {shape}",
    }


def _turns(rng: np.random.Generator, objs: list[dict], n_rounds: int) -> list[Turn]:
    turns: list[Turn] = []
    used: set[tuple] = set()
    referred: list[int] = []
    actions = [o["action"] for o in objs]
    shapes = [o["shape"] for o in objs]

    def grounded(o: dict) -> str:
        return f"<p>{o['desc']}</p> [SEG]"

    attempts = 0
    while len(turns) < n_rounds and attempts < 50 * n_rounds:
        attempts += 1
        kind = (
            "refer"
            if not turns
            else str(rng.choice(["refer", "size", "pair", "describe", "ground", "followup"]))
        )
        i = int(rng.integers(len(objs)))
        o = objs[i]
        if kind == "refer":
            q, regions = "What is <mask> doing?", [o]
            a, gts = f"The {grounded(o)} is {o['action']}.", [o]
        elif kind == "size":
            q, regions = "How big is <mask>, and what colour is it?", [o]
            a, gts = f"It is {o['size']} and {o['colour']}: the {grounded(o)}.", [o]
        elif kind == "pair" and len(objs) >= 2:
            j = int(rng.choice([k for k in range(len(objs)) if k != i]))
            p = objs[j]
            q, regions = "How do <mask> and <mask> move?", [o, p]
            a = f"The {grounded(o)} is {o['action']}, while the {grounded(p)} is {p['action']}."
            gts, i = [o, p], (i, j)
        elif kind == "describe":
            q, regions, gts = "Describe what happens in the video.", [], list(objs)
            a = f"There {'is one object' if len(objs) == 1 else f'are {len(objs)} objects'}. " + (
                " ".join(f"The {grounded(x)} is {x['action']}." for x in objs)
            )
        elif kind == "ground" and actions.count(o["action"]) == 1:
            q, regions = f"Which object is {o['action']}?", []
            a, gts = f"The {grounded(o)} is {o['action']}.", [o]
        elif kind == "followup" and referred and shapes.count(objs[referred[-1]]["shape"]) == 1:
            i = referred[-1]
            o = objs[i]
            q, regions = f"What about the {o['shape']} you described before? What is it doing?", []
            a, gts = f"The {grounded(o)} is {o['action']}.", [o]
        else:
            continue
        key = (kind,) if kind == "describe" else (kind, i)  # one question text per key
        if key in used:
            continue
        used.add(key)
        if kind in ("refer", "size", "pair"):
            referred.append(i if isinstance(i, int) else i[0])
        regions_r = [Region(x["masks"]) for x in regions]
        gt_masks = [x["masks"] for x in gts]
        if rng.random() < P_INVALID:  # an inconsistent turn: the loader must drop it
            if rng.random() < 0.5:
                q = q.replace("?", ", compared with <mask>?", 1)
            else:
                a = a.replace(" [SEG]", "", 1)
        turns.append(Turn(q, a, regions_r, gt_masks, question_id=f"q{len(turns)}"))
    return turns


def make_synthetic_bench(
    n_videos: int = 50,
    n_frames: int = 16,
    size: int = 64,
    max_objects: int = 4,
    max_rounds: int = 5,
    seed: int = 0,
) -> list[VideoRecord]:
    """``n_videos`` synthetic SAMA-Bench records of ``n_frames`` frames of ``size`` x ``size``.

    Each video has 1..``max_objects`` objects (distinct colours) and between ``max_rounds - 2``
    and ``max_rounds + 2`` rounds (at least 1; on average ``max_rounds``), so some conversations
    span two chunks of 5. Deterministic in ``seed``.
    """
    owner = "make_synthetic_bench"
    n_videos = check_int("n_videos", owner, n_videos, low=1, high=100_000)
    n_frames = check_int("n_frames", owner, n_frames, low=1, high=1024)
    size = check_int("size", owner, size, low=32, high=1024)
    max_objects = check_int("max_objects", owner, max_objects, low=1, high=len(COLORS))
    max_rounds = check_int("max_rounds", owner, max_rounds, low=1, high=100)
    seed = check_int("seed", owner, seed, low=0, high=2**32 - 1)
    check_memory("n_videos", owner, n_videos, n_videos * n_frames * size * size * (3 + max_objects))
    rng = np.random.default_rng(seed)
    names = list(COLORS)
    records = []
    for v in range(n_videos):
        n_obj = int(rng.integers(1, max_objects + 1))
        colours = [names[k] for k in rng.choice(len(names), n_obj, replace=False)]
        objs = [_object(rng, c, n_frames, size) for c in colours]
        frames = (rng.normal(110, 6, (n_frames, size, size, 3))).clip(0, 255).astype(np.uint8)
        for o in objs:
            frames[o["masks"]] = COLORS[o["colour"]]
        n_rounds = max(1, int(rng.integers(max_rounds - 2, max_rounds + 3)))
        records.append(
            VideoRecord(
                f"synthetic_{v:04d}",
                frames,
                size,
                size,
                _turns(rng, objs, n_rounds),
                SUBSETS[v % len(SUBSETS)],
            )
        )
    return records
