"""ST²360D: a panorama becomes a video, a video depth model predicts it, the frames are merged.

Pipeline (Sec. 3): spherical-uniform views (:func:`st360d.sus_views`), latitude-guided order
(:func:`st360d.lgs_order`), perspective frames (:func:`st360d.erp_to_perspective`), the video
depth model on each clip, clip-to-clip alignment on the shared equator frames, and the merge back
to an ERP range map (:func:`st360d.perspective_to_erp`). The baselines stitch independently
predicted patches: a cubemap with per-face median normalisation and per-patch prediction on the
SUS views.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from paperkit import check_choice, check_int, check_real, check_tensor, param_error
from st360d.geometry import (
    CameraBatch,
    camera_rays,
    check_erp_hw,
    check_fov,
    check_image,
    erp_to_perspective,
    focal,
    perspective_to_erp,
    view_rotations,
)
from st360d.models import check_model, check_output
from st360d.sampling import ORDERS, cubemap_views, latlon_grid_views, lgs_order, sus_views

__all__ = ["ST360D", "cubemap_depth", "per_patch_depth", "solve_disparity_shift"]


def _check_rgb(erp_rgb: object, owner: str) -> torch.Tensor:
    check_image("erp_rgb", owner, erp_rgb)
    if erp_rgb.shape[2] != 3:
        raise param_error("erp_rgb", owner, "an RGB image (H, W, 3)", tuple(erp_rgb.shape))
    return erp_rgb


def _pair_rays(
    R_i: torch.Tensor, R_j: torch.Tensor, fov: float, size: tuple[int, int], stride: int
):
    """Pixels of frame i (every ``stride``-th) seen by frame j: their flat indices in i, the
    grid_sample coordinates in j, ``‖r_i‖`` and ``‖r_j‖``."""
    h, w = size
    r = camera_rays(fov, size)[::stride, ::stride]
    flat = (torch.arange(h)[::stride, None] * w + torch.arange(w)[None, ::stride]).reshape(-1)
    r = r.reshape(-1, 3)
    c = r @ (R_j.T @ R_i).T
    cz = c[:, 2]
    f = focal(fov, w)
    tx, ty = (w / 2) / f, (h / 2) / f
    xn, yn = c[:, 0] / cz.clamp(min=1e-9), c[:, 1] / cz.clamp(min=1e-9)
    ok = (cz > 1e-9) & (xn.abs() <= tx) & (yn.abs() <= ty)
    grid = torch.stack([xn[ok] / tx, -yn[ok] / ty], -1)
    norm_i = r[ok].norm(dim=1)
    return flat[ok], grid, norm_i, norm_i / cz[ok]


def solve_disparity_shift(disp: torch.Tensor, cameras: CameraBatch, stride: int = 2) -> float:
    """The shift b of affine disparity ``D_t = a / z_t + b`` shared by a clip, from overlaps.

    All views share the camera centre, so a point seen in frames i and j has one range ρ and
    ``(D_i − b) / ‖r_i‖ = (D_j − b) / ‖r_j‖ = a / ρ``, i.e.
    ``D_i ‖r_j‖ − D_j ‖r_i‖ = b (‖r_j‖ − ‖r_i‖)``: b by least squares over the overlapping
    pixels of consecutive frames (refitted once without the 10 % largest residuals, which sit on
    depth edges).
    """
    owner = "solve_disparity_shift"
    check_tensor("disp", owner, disp, ndim=3)
    if not isinstance(cameras, CameraBatch):
        raise param_error("cameras", owner, "a CameraBatch", type(cameras).__name__, cls=TypeError)
    if len(cameras) != disp.shape[0] or tuple(cameras.size) != tuple(disp.shape[1:]):
        raise param_error(
            "cameras",
            owner,
            f"one camera of size {tuple(disp.shape[1:])} per map",
            f"{len(cameras)} cameras of size {cameras.size}",
        )
    stride = check_int("stride", owner, stride, low=1, high=64)
    R = cameras.R.to(torch.float64)
    D = disp.to(torch.float64)
    lhs, rhs = [], []
    for t in range(1, D.shape[0]):
        for i, j in ((t - 1, t), (t, t - 1)):
            flat, grid, n_i, n_j = _pair_rays(R[i], R[j], cameras.fov_deg, cameras.size, stride)
            if flat.numel() == 0:
                continue
            d_j = F.grid_sample(
                D[j][None, None],
                grid.reshape(1, 1, -1, 2),
                mode="bilinear",
                padding_mode="border",
                align_corners=False,
            )[0, 0, 0]
            d_i = D[i].reshape(-1)[flat]
            lhs.append(n_j - n_i)
            rhs.append(d_i * n_j - d_j * n_i)
    if not lhs:
        raise param_error(
            "cameras",
            "solve_disparity_shift",
            "consecutive frames that overlap",
            f"{len(cameras)} frames without overlap",
        )
    e, c = torch.cat(lhs), torch.cat(rhs)
    b = (e * c).sum() / (e * e).sum()
    resid = (c - b * e).abs()
    keep = resid <= torch.quantile(resid, 0.9)
    if int(keep.sum()) > 0 and float((e[keep] ** 2).sum()) > 0:
        b = (e[keep] * c[keep]).sum() / (e[keep] ** 2).sum()
    return float(b)


class ST360D:
    """Training-free 360° depth through a video depth model (ST²360D, Sec. 3).

    ``__call__(erp_rgb (H, W, 3) float in [0, 1])`` returns ``dict(depth (H', W'), mask,
    frames (T, h, w, 3), views (T, 2), clips)``. Steps: SUS views; frames in ``order``
    (``"lgs"``: two clips sharing the equator sweep); the model on each clip; for
    ``kind="disparity"``, the clips are put on one affine by least squares on their shared
    frames, the shared shift b is solved from the overlaps (:func:`solve_disparity_shift`) and
    ``z = 1 / (D − b)``; for ``kind="depth"``, each later clip gets the scale
    ``exp(mean log(z_first / z_clip))`` on the shared frames; shared frames are averaged (in
    log depth); then the merge with ``cos^p`` blending (``align="sequential"`` additionally
    fits each frame's scale to the running mosaic). The depth is relative (one unknown global
    scale) unless the model is metric. ``sampling="latlon"`` replaces SUS by the lat-lon grid
    (the same rings, n₀ views on each), the ablation of SUS.
    """

    def __init__(
        self,
        model,
        fov_deg: float = 90.0,
        frame_size: int = 518,
        order: str = "lgs",
        blend_power: float = 4.0,
        align: str = "none",
        erp_out: tuple[int, int] | None = None,
        *,
        overlap: float = 0.5,
        seed: int = 0,
        sampling: str = "sus",
    ) -> None:
        owner = "ST360D"
        self.model = check_model(model, owner)
        self.fov_deg = check_fov(fov_deg, owner)
        self.frame_size = check_int("frame_size", owner, frame_size, low=8, high=4096)
        self.order = check_choice("order", owner, order, ORDERS)
        self.blend_power = check_real("blend_power", owner, blend_power, low=0.0, high=64.0)
        self.align = check_choice("align", owner, align, ("none", "sequential"))
        self.erp_out = None if erp_out is None else check_erp_hw(erp_out, owner, "erp_out")
        self.overlap = check_real("overlap", owner, overlap, low=0.0, high=0.9)
        self.seed = check_int("seed", owner, seed, low=0)
        self.sampling = check_choice("sampling", owner, sampling, ("sus", "latlon"))

    def predict_frames(self, frames: torch.Tensor, views) -> tuple[torch.Tensor, list]:
        """Per-view optical-axis depth ``(T, h, w)`` (one scale for all frames) and the clips."""
        clips = lgs_order(views, self.order, self.seed)
        R = view_rotations(views, frames.dtype)
        kind = self.model.kind
        size = (self.frame_size, self.frame_size)
        outs = []
        for clip in clips:
            idx = torch.as_tensor(clip)
            cams = CameraBatch(R[idx], self.fov_deg, size)
            out = check_output(self.model(frames[idx], cams), frames[idx], kind, "ST360D")
            outs.append(out.to(torch.float64))
        first = {int(v): k for k, v in enumerate(clips[0])}
        for c in range(1, len(clips)):
            shared = [(first[int(v)], k) for k, v in enumerate(clips[c]) if int(v) in first]
            if not shared:
                raise param_error("order", "ST360D", "clips that share frames", self.order)
            a = torch.stack([outs[0][i] for i, _ in shared]).reshape(-1)
            b = torch.stack([outs[c][k] for _, k in shared]).reshape(-1)
            if kind == "depth":
                outs[c] = outs[c] * torch.exp((a.log() - b.log()).mean())
            else:
                X = torch.stack([b, torch.ones_like(b)], 1)
                coef = torch.linalg.lstsq(X, a[:, None]).solution[:, 0]
                outs[c] = coef[0] * outs[c] + coef[1]
        T = len(views)
        acc = torch.zeros(T, *size, dtype=torch.float64)
        cnt = torch.zeros(T, dtype=torch.float64)
        for clip, out in zip(clips, outs, strict=True):
            idx = torch.as_tensor(clip)
            acc.index_add_(0, idx, out.log() if kind == "depth" else out)
            cnt.index_add_(0, idx, torch.ones(len(clip), dtype=torch.float64))
        mean = acc / cnt[:, None, None]
        if kind == "depth":
            return mean.exp(), clips
        shift = 0.0
        for clip in clips:
            idx = torch.as_tensor(clip)
            cams = CameraBatch(view_rotations(views)[idx], self.fov_deg, size)
            shift += solve_disparity_shift(mean[idx], cams) * len(clip)
        shift /= sum(len(c) for c in clips)
        inv = mean - shift
        floor = 1e-6 * float(inv.abs().max())
        return 1.0 / inv.clamp(min=floor), clips

    def __call__(self, erp_rgb: torch.Tensor) -> dict:
        erp_rgb = _check_rgb(erp_rgb, "ST360D")
        H, W = erp_rgb.shape[:2]
        sample = sus_views if self.sampling == "sus" else latlon_grid_views
        views = torch.from_numpy(sample(self.fov_deg, self.overlap))
        frames = erp_to_perspective(
            erp_rgb, views, self.fov_deg, (self.frame_size, self.frame_size)
        )
        z, clips = self.predict_frames(frames, views)
        depth, mask = perspective_to_erp(
            z.to(erp_rgb.dtype),
            views,
            self.fov_deg,
            self.erp_out or (H, W),
            "depth",
            self.blend_power,
            align=self.align,
        )
        return {"depth": depth, "mask": mask, "frames": frames, "views": views, "clips": clips}


def _independent(model, frames: torch.Tensor, views: torch.Tensor, fov: float, owner: str):
    R = view_rotations(views, frames.dtype)
    size = tuple(frames.shape[1:3])
    outs = []
    for t in range(frames.shape[0]):
        cams = CameraBatch(R[t : t + 1], fov, size)
        outs.append(check_output(model(frames[t : t + 1], cams), frames[t : t + 1], "depth", owner))
    return torch.cat(outs)


def cubemap_depth(
    model,
    erp_rgb: torch.Tensor,
    face_size: int = 518,
    blend_power: float = 4.0,
    erp_out: tuple[int, int] | None = None,
) -> dict:
    """Cubemap baseline (360MonoDepth-style patches): the six 90° faces are predicted one by one,
    each normalised by its own median depth (independent faces share no scale), and merged.
    Returns ``dict(depth, mask, views)``."""
    owner = "cubemap_depth"
    model = check_model(model, owner)
    if model.kind != "depth":
        raise param_error("model", owner, 'a model of kind "depth"', model.kind)
    erp_rgb = _check_rgb(erp_rgb, owner)
    size = check_int("face_size", owner, face_size, low=8, high=4096)
    p = check_real("blend_power", owner, blend_power, low=0.0, high=64.0)
    out_hw = check_erp_hw(erp_out, owner, "erp_out") if erp_out is not None else None
    views = torch.from_numpy(cubemap_views())
    frames = erp_to_perspective(erp_rgb, views, 90.0, (size, size))
    z = _independent(model, frames, views, 90.0, owner)
    z = z / z.reshape(len(z), -1).median(dim=1).values[:, None, None]
    depth, mask = perspective_to_erp(z, views, 90.0, out_hw or tuple(erp_rgb.shape[:2]), "depth", p)
    return {"depth": depth, "mask": mask, "views": views}


def per_patch_depth(
    model,
    erp_rgb: torch.Tensor,
    fov_deg: float = 90.0,
    frame_size: int = 518,
    blend_power: float = 4.0,
    align: str = "none",
    erp_out: tuple[int, int] | None = None,
) -> dict:
    """Per-patch baseline on the SUS views: every frame predicted on its own (no temporal
    model), then merged; ``align="sequential"`` fits each frame's scale to the running mosaic.
    Returns ``dict(depth, mask, views)``."""
    owner = "per_patch_depth"
    model = check_model(model, owner)
    if model.kind != "depth":
        raise param_error("model", owner, 'a model of kind "depth"', model.kind)
    erp_rgb = _check_rgb(erp_rgb, owner)
    fov = check_fov(fov_deg, owner)
    size = check_int("frame_size", owner, frame_size, low=8, high=4096)
    p = check_real("blend_power", owner, blend_power, low=0.0, high=64.0)
    check_choice("align", owner, align, ("none", "sequential"))
    out_hw = check_erp_hw(erp_out, owner, "erp_out") if erp_out is not None else None
    views = torch.from_numpy(sus_views(fov))
    frames = erp_to_perspective(erp_rgb, views, fov, (size, size))
    z = _independent(model, frames, views, fov, owner)
    depth, mask = perspective_to_erp(
        z, views, fov, out_hw or tuple(erp_rgb.shape[:2]), "depth", p, align=align
    )
    return {"depth": depth, "mask": mask, "views": views}
