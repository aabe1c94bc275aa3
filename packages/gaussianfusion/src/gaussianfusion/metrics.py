"""Open-loop planning metrics and a small PDM score (NAVSIM's weights, paper Sec. 4.1).

Trajectories are (B, T, 2) waypoints every 0.5 s in the ego frame (the ego car starts at the
origin heading +x). Collision and drivable-area checks run on the path densified by linear
interpolation (4 points per 0.5 s step, starting at the origin), with the ego footprint a box of
half size (2.0, 0.9) m. The PDM score per scene is

    PDMS = NC * DAC * (5 EP + 5 TTC + 2 C) / 12,

NC: no collision; DAC: every point on the road; EP: the progress along x divided by the
expert's, clipped to [0, 1] (1 when the expert stops); TTC: no collision when each point is
extrapolated 0.5 s and 1 s along its velocity; C: comfort, |acceleration| <= 4.89 m/s^2 and
|jerk| <= 8.37 m/s^3 by finite differences (the ego history at its initial speed prepended).
NC, DAC, TTC, C are in {0, 1}.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from paperkit import check_real, check_tensor, param_error

__all__ = ["ade", "collision_rate", "fde", "mini_pdms", "offroad_rate", "scene_scores"]

DT = 0.5
SUBSTEPS = 4
EGO_HALF = (2.0, 0.9)
MAX_ACC, MAX_JERK = 4.89, 8.37


def _pair(owner: str, pred, target):
    dims: dict = {}
    check_tensor("pred", owner, pred, shape=("B", "T", 2), dims=dims)
    check_tensor("target", owner, target, shape=("B", "T", 2), dims=dims)


def ade(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Average displacement error (1/T) sum_t ||pred_t - target_t||_2, shape (B,)."""
    _pair("ade", pred, target)
    return (pred - target).norm(dim=-1).mean(-1)


def fde(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Final displacement error ||pred_T - target_T||_2, shape (B,)."""
    _pair("fde", pred, target)
    return (pred[:, -1] - target[:, -1]).norm(dim=-1)


def _dense_path(traj: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Points (B, T*SUBSTEPS, 2) and their times (T*SUBSTEPS,) along the interpolated path."""
    b, t, _ = traj.shape
    full = torch.cat([traj.new_zeros(b, 1, 2), traj], 1)
    frac = torch.arange(1, SUBSTEPS + 1, dtype=traj.dtype, device=traj.device) / SUBSTEPS
    pts = full[:, :-1, None] + frac[None, None, :, None] * (full[:, 1:, None] - full[:, :-1, None])
    times = DT * (torch.arange(t, dtype=traj.dtype, device=traj.device)[:, None] + frac[None])
    return pts.reshape(b, -1, 2), times.reshape(-1)


def _hits(pts: torch.Tensor, times: torch.Tensor, obstacles: torch.Tensor) -> torch.Tensor:
    """(B,) bool: some point (B, P, 2) at its time (P,) or (B, P) overlaps some moving box."""
    times = times.expand(pts.shape[0], -1) if times.dim() == 1 else times
    cx = obstacles[:, None, :, 0] + obstacles[:, None, :, 4] * times[..., None]  # (B, P, M)
    dx = (pts[..., 0:1] - cx).abs()
    dy = (pts[..., 1:2] - obstacles[:, None, :, 1]).abs()
    hit = (dx < obstacles[:, None, :, 2] + EGO_HALF[0]) & (
        dy < obstacles[:, None, :, 3] + EGO_HALF[1]
    )
    return hit.flatten(1).any(1)


def _check_traj_obstacles(owner: str, traj, obstacles) -> None:
    dims: dict = {}
    check_tensor("traj", owner, traj, shape=("B", "T", 2), dims=dims)
    check_tensor("obstacles", owner, obstacles, shape=("B", "M", 5), dims=dims)


def collision_rate(traj: torch.Tensor, obstacles: torch.Tensor) -> torch.Tensor:
    """1 where the ego footprint along ``traj`` (B, T, 2) overlaps a box of ``obstacles``
    (B, M, 5): (cx, cy, half length, half width, vx), box at time t centred (cx + vx t, cy);
    else 0. Shape (B,); its mean is the collision rate."""
    _check_traj_obstacles("collision_rate", traj, obstacles)
    pts, times = _dense_path(traj)
    return _hits(pts, times, obstacles).to(traj.dtype)


def _offroad(traj: torch.Tensor, drivable: torch.Tensor, extent: float) -> torch.Tensor:
    pts, _ = _dense_path(traj)
    h, w = drivable.shape[-2:]
    row = torch.floor((pts[..., 0] + extent) * h / (2 * extent)).long()
    col = torch.floor((pts[..., 1] + extent) * w / (2 * extent)).long()
    inside = (row >= 0) & (row < h) & (col >= 0) & (col < w)
    b = torch.arange(traj.shape[0], device=traj.device)[:, None].expand_as(row)
    on_road = drivable[b, row.clamp(0, h - 1), col.clamp(0, w - 1)] & inside
    return (~on_road).any(1).to(traj.dtype)


def offroad_rate(traj: torch.Tensor, drivable: torch.Tensor, extent: float = 32.0) -> torch.Tensor:
    """1 where some point of the path leaves the drivable raster ``drivable`` (B, H, W) bool
    over [-extent, extent]^2 (rows along x), else 0. Shape (B,)."""
    owner = "offroad_rate"
    dims: dict = {}
    check_tensor("traj", owner, traj, shape=("B", "T", 2), dims=dims)
    check_tensor("drivable", owner, drivable, shape=("B", "H", "W"), dims=dims, dtype="bool")
    extent = check_real("extent", owner, extent, low=0, low_open=True)
    return _offroad(traj, drivable, extent)


def _comfort(traj: torch.Tensor, speed: torch.Tensor) -> torch.Tensor:
    b = traj.shape[0]
    hist = torch.stack([-speed * DT, torch.zeros_like(speed)], -1)[:, None]
    full = torch.cat([hist, traj.new_zeros(b, 1, 2), traj], 1)
    acc = (full[:, 2:] - 2 * full[:, 1:-1] + full[:, :-2]) / DT**2
    jerk = (acc[:, 1:] - acc[:, :-1]) / DT
    ok = (acc.norm(dim=-1).amax(1) <= MAX_ACC) & (jerk.norm(dim=-1).amax(1) <= MAX_JERK)
    return ok.to(traj.dtype)


def scene_scores(
    traj: torch.Tensor,
    obstacles: torch.Tensor,
    drivable: torch.Tensor,
    extent: float,
    expert: torch.Tensor | None = None,
    speed: torch.Tensor | None = None,
) -> dict[str, torch.Tensor]:
    """The sub-scores nc, dac (and, given ``expert`` and ``speed``, ep, ttc, c and pdms), each
    (B,). No argument checks: used inside :func:`mini_pdms` and the scene generator."""
    pts, times = _dense_path(traj)
    nc = 1.0 - _hits(pts, times, obstacles).to(traj.dtype)
    dac = 1.0 - _offroad(traj, drivable, extent)
    out = {"nc": nc, "dac": dac}
    if expert is None or speed is None:
        return out
    vel = torch.diff(torch.cat([traj.new_zeros(traj.shape[0], 1, 2), traj], 1), dim=1) / DT
    vel = vel.repeat_interleave(SUBSTEPS, 1)
    ttc_hit = torch.zeros_like(nc, dtype=torch.bool)
    for tau in (0.5, 1.0):
        ttc_hit |= _hits(pts + tau * vel, times + tau, obstacles)
    ttc = 1.0 - ttc_hit.to(traj.dtype)
    ref = expert[:, -1, 0]
    ep = torch.where(
        ref > 0.5, (traj[:, -1, 0] / ref.clamp(min=0.5)).clamp(0.0, 1.0), torch.ones_like(ref)
    )
    c = _comfort(traj, speed)
    out.update(ep=ep, ttc=ttc, c=c, pdms=nc * dac * (5 * ep + 5 * ttc + 2 * c) / 12)
    return out


def mini_pdms(traj: torch.Tensor, scene: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """PDMS = NC * DAC * (5 EP + 5 TTC + 2 C) / 12 per scene, shape (B,) (module docstring).

    ``scene`` holds (as :func:`gaussianfusion.make_driving_scenes` returns, rows matching
    ``traj``) ``obstacles`` (B, M, 5), ``drivable`` (B, H, W) bool, ``expert`` (B, T, 2),
    ``ego`` (B, 4) and ``extent``.
    """
    owner = "mini_pdms"
    if not isinstance(scene, Mapping):
        raise param_error(
            "scene", owner, "a mapping of tensors", type(scene).__name__, cls=TypeError
        )
    missing = [k for k in ("obstacles", "drivable", "expert", "ego", "extent") if k not in scene]
    if missing:
        raise param_error(
            "scene",
            owner,
            "a mapping with obstacles, drivable, expert, ego, extent",
            f"a mapping without {missing}",
        )
    dims: dict = {}
    check_tensor("traj", owner, traj, shape=("B", "T", 2), dims=dims)
    try:
        check_tensor("obstacles", owner, scene["obstacles"], shape=("B", "M", 5), dims=dims)
        check_tensor(
            "drivable", owner, scene["drivable"], shape=("B", "H", "W"), dims=dims, dtype="bool"
        )
        check_tensor("expert", owner, scene["expert"], shape=("B", "T", 2), dims=dims)
        check_tensor("ego", owner, scene["ego"], shape=("B", 4), dims=dims)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"The 'scene' parameter of {owner}: {exc}") from None
    extent = float(scene["extent"])
    return scene_scores(
        traj, scene["obstacles"], scene["drivable"], extent, scene["expert"], scene["ego"][:, 0]
    )["pdms"]
