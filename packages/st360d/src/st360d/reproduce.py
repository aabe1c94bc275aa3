"""The headline experiment as a mechanism check.

``st360d reproduce [--quick] [--seed N] [--out DIR]``.

No video depth model can be downloaded here, so the claim is checked on rendered rooms with exact
ground truth (:func:`st360d.render_room`, ERP 256 x 512, frames 128²) and weight-free models:

* ``OracleDepth`` (exact depth: the geometry and the merge alone);
* ``ScaleDriftDepth(mode="overlap")``: a video-model emulator whose frame-to-frame log-scale step
  grows as consecutive frames overlap less (so "LGS beats raster/random" holds for it by
  construction);
* ``SequentialAlign(ScaleDriftDepth(mode="iid"))``: per-frame depth with an independent scale
  error per frame, made consistent by aligning each frame to the previous one through the exact
  rotation homography (a real mechanism whose success needs overlap between consecutive frames);
* baselines: cubemap with per-face median normalisation, per-patch independent prediction on the
  SUS views (and the same with merge-time alignment to the running mosaic).

Metrics: AbsRel and δ1 after one global median scale, averaged over rooms. This is NOT the paper's
result (real VDE models on Matterport3D / Stanford2D3D); whether a real video depth model behaves
like the emulator is untested here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from paperkit import Claim, Report, figure, print_table, progress, save_figure
from st360d.metrics import depth_metrics
from st360d.models import OracleDepth, ScaleDriftDepth, SequentialAlign
from st360d.pipeline import ST360D, cubemap_depth, per_patch_depth
from st360d.sampling import latlon_grid_views, sus_views
from st360d.scene import render_room

__all__ = ["RUNS", "claims", "reproduce", "run_room"]

#: Settings of the quick (``True``) and full (``False``) runs.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "rooms": 6,
        "erp_hw": (256, 512),
        "frame_size": 128,
        "sigma": 0.2,
        "fov": 90.0,
        "drift_draws": 3,
    },
    False: {
        "rooms": 20,
        "erp_hw": (256, 512),
        "frame_size": 128,
        "sigma": 0.2,
        "fov": 90.0,
        "drift_draws": 3,
    },
}
#: ``drift_draws``: independent draws of the overlap emulator's random walk per room, averaged
#: (its per-room spread is large: the walk's log-scale spread grows like σ sqrt(Σ (1 − o_t)²)).
#: Rows of the table: name -> (pipeline, model, order or setting, frames used).
METHODS = (
    "cubemap (iid, per-face median)",
    "per-patch SUS (iid)",
    "per-patch SUS (iid) + merge alignment",
    "ST2360D overlap-emulator, lgs",
    "ST2360D overlap-emulator, raster",
    "ST2360D overlap-emulator, random",
    "ST2360D SequentialAlign(iid), lgs",
    "ST2360D SequentialAlign(iid), raster",
    "ST2360D SequentialAlign(iid), random",
    "ST2360D SequentialAlign(iid), lgs, lat-lon grid",
    "ST2360D oracle, lgs",
    "ST2360D oracle, lgs, lat-lon grid",
)
#: Relative AbsRel difference under which two orders are reported as a tie.
TIE = 0.25


def run_room(seed: int, settings: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Every method of :data:`METHODS` on room ``seed``; AbsRel, δ1 and frames per method."""
    room = render_room(seed, tuple(settings["erp_hw"]))
    rgb, gt, scene = room["rgb"], room["range"], room["scene"]
    fov, size, sigma = settings["fov"], settings["frame_size"], settings["sigma"]
    oracle = OracleDepth(scene)

    def iid() -> ScaleDriftDepth:
        return ScaleDriftDepth(oracle, "iid", sigma=sigma, seed=seed)

    def drift(order: str) -> dict[str, float]:
        runs = [
            st(ScaleDriftDepth(oracle, "overlap", sigma=sigma, seed=1000 * seed + k), order)
            for k in range(settings["drift_draws"])
        ]
        ms = [depth_metrics(r["depth"], gt, r["mask"]) for r in runs]
        return {
            "abs_rel": float(np.mean([m["abs_rel"] for m in ms])),
            "delta1": float(np.mean([m["delta1"] for m in ms])),
            "coverage": float(runs[0]["mask"].double().mean()),
        }

    def st(model, order="lgs", sampling="sus"):
        return ST360D(model, fov, size, order, seed=seed, sampling=sampling)(rgb)

    n_sus, n_grid = len(sus_views(fov)), len(latlon_grid_views(fov))
    runs = {
        METHODS[0]: (cubemap_depth(iid(), rgb, size), 6),
        METHODS[1]: (per_patch_depth(iid(), rgb, fov, size), n_sus),
        METHODS[2]: (per_patch_depth(iid(), rgb, fov, size, align="sequential"), n_sus),
        METHODS[6]: (st(SequentialAlign(iid()), "lgs"), n_sus),
        METHODS[7]: (st(SequentialAlign(iid()), "raster"), n_sus),
        METHODS[8]: (st(SequentialAlign(iid()), "random"), n_sus),
        METHODS[9]: (st(SequentialAlign(iid()), "lgs", "latlon"), n_grid),
        METHODS[10]: (st(oracle, "lgs"), n_sus),
        METHODS[11]: (st(oracle, "lgs", "latlon"), n_grid),
    }
    out = {
        METHODS[3 + k]: {**drift(o), "frames": n_sus}
        for k, o in enumerate(("lgs", "raster", "random"))
    }
    for name, (res, frames) in runs.items():
        m = depth_metrics(res["depth"], gt, res["mask"])
        out[name] = {
            "abs_rel": m["abs_rel"],
            "delta1": m["delta1"],
            "frames": frames,
            "coverage": float(res["mask"].double().mean()),
        }
    return out


def _tie(a: float, b: float) -> bool:
    return abs(a - b) <= TIE * max(a, b)


def claims(mean: dict[str, dict[str, float]], worst_oracle: float) -> list[Claim]:
    """The claims, from the per-method means (and the worst room of the oracle)."""
    a = {k: v["abs_rel"] for k, v in mean.items()}
    indep = min(a[METHODS[0]], a[METHODS[1]])
    over_lgs, seq_lgs = a[METHODS[3]], a[METHODS[6]]
    won = [over_lgs < indep, seq_lgs < indep]
    c_beat = Claim(
        "Consistency-aware pipelines ordered by LGS beat independently predicted patches",
        paper="ST²360D beats patch-based training-free methods (Sec. 4; numbers not retrieved)",
        measured=f"AbsRel overlap-emulator LGS {over_lgs:.4f}, SequentialAlign LGS {seq_lgs:.4f} "
        f"vs cubemap {a[METHODS[0]]:.4f}, per-patch SUS {a[METHODS[1]]:.4f}",
        verdict="held" if all(won) else ("partly" if any(won) else "not held"),
        why="mean over rooms, one global median scale; the best independent baseline is the bar",
    )
    o = [a[METHODS[k]] for k in (3, 4, 5)]
    s = [a[METHODS[k]] for k in (6, 7, 8)]
    over_ok = o[0] <= o[1] < o[2]
    seq_ok = (s[0] <= s[1] or _tie(s[0], s[1])) and s[0] < s[2] and not _tie(s[0], s[2])
    tie_word = "tie" if _tie(s[0], s[1]) else ("LGS better" if s[0] < s[1] else "raster better")
    c_order = Claim(
        "LGS ordering is at least as good as raster and better than random",
        paper="LGS improves over other scan orders (Sec. 4 ablation; numbers not retrieved)",
        measured=f"overlap-emulator lgs/raster/random {o[0]:.4f}/{o[1]:.4f}/{o[2]:.4f}; "
        f"SequentialAlign {s[0]:.4f}/{s[1]:.4f}/{s[2]:.4f} (lgs vs raster: {tie_word})",
        verdict="held" if over_ok and seq_ok else ("partly" if over_ok or seq_ok else "not held"),
        why="for the overlap emulator this holds by construction; SequentialAlign is the real "
        f"test: LGS and raster both keep consecutive frames overlapping (a tie within {TIE:.0%} "
        "counts as a tie), only the random order breaks the chain",
    )
    sus, grid = a[METHODS[6]], a[METHODS[9]]
    n_sus, n_grid = mean[METHODS[6]]["frames"], mean[METHODS[9]]["frames"]
    c_sus = Claim(
        "SUS needs fewer frames than a lat-lon grid at equal or better accuracy",
        paper="spherical-uniform sampling avoids over-sampling the poles (Sec. 3)",
        measured=f"{n_sus:.0f} vs {n_grid:.0f} frames; SequentialAlign LGS AbsRel {sus:.4f} vs "
        f"{grid:.4f}; oracle {a[METHODS[10]]:.2e} vs {a[METHODS[11]]:.2e}",
        verdict="held" if n_sus < n_grid and (sus <= grid or _tie(sus, grid)) else "not held",
        why=f"the same rings (Δφ = FoV/2); a difference within {TIE:.0%} counts as equal",
    )
    c_oracle = Claim(
        "With exact per-frame depth the pipeline reproduces the ground truth (mean AbsRel < 1e-3)",
        paper="geometry and merging are exact (our check, not a paper number)",
        measured=f"oracle AbsRel mean {a[METHODS[10]]:.2e}, worst room {worst_oracle:.2e}",
        verdict="held" if a[METHODS[10]] < 1e-3 else "not held",
        why="judged on the mean over rooms; the residual sits on depth edges, where bilinear "
        "interpolation mixes two surfaces (worst for boxes close to the camera)",
    )
    c_real = Claim(
        "Strong zero-shot 360° depth on Matterport3D / Stanford2D3D, up to 4K, with a real VDE",
        paper="headline of the paper (numbers not retrieved)",
        measured="not run: no video depth weights or panorama data sets can be downloaded here",
        verdict="not testable here",
        why="any model with the VideoDepthModel protocol plugs into ST360D",
    )
    return [c_beat, c_order, c_sus, c_oracle, c_real]


def _plot(mean: dict[str, dict[str, float]], path: Path) -> Path:
    fig, ax = figure(size=(8.0, 4.5))
    names = list(mean)
    vals = [max(mean[n]["abs_rel"], 1e-5) for n in names]
    ax.barh(range(len(names)), vals, color="tab:blue")
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("AbsRel (median-aligned, mean over rooms)")
    ax.set_title("ST²360D mechanism check on rendered rooms")
    return save_figure(fig, path)


def reproduce(*, quick: bool = False, seed: int = 0, out: str | Path = ".") -> Report:
    """Run :func:`run_room` on ``rooms`` rooms (seeds ``seed, seed + 1, …``) and test the claims."""
    settings = RUNS[bool(quick)]
    cpu0 = time.process_time()
    per_room = []
    for k in progress(range(settings["rooms"]), "rooms"):
        per_room.append(run_room(seed + k, settings))
    mean = {
        name: {
            key: float(np.mean([r[name][key] for r in per_room]))
            for key in ("abs_rel", "delta1", "frames", "coverage")
        }
        for name in METHODS
    }
    worst_oracle = max(r[METHODS[10]]["abs_rel"] for r in per_room)
    rows = [
        {
            "method": n,
            "AbsRel": mean[n]["abs_rel"],
            "delta1": mean[n]["delta1"],
            "frames": int(mean[n]["frames"]),
            "coverage": mean[n]["coverage"],
        }
        for n in METHODS
    ]
    cpu = time.process_time() - cpu0
    print_table(
        rows,
        title=f"{settings['rooms']} rooms, ERP {settings['erp_hw']}, "
        f"frames {settings['frame_size']}² (CPU {cpu:.0f} s)",
    )
    fig = _plot(mean, Path(out) / "st360d.png")
    return Report(
        claims=claims(mean, worst_oracle),
        tables={"depth": rows},
        figures=[fig],
        settings={**settings, "seed": seed, "cpu_seconds": cpu},
        data={"per_room_abs_rel": [{n: r[n]["abs_rel"] for n in METHODS} for r in per_room]},
    )
