"""The pluggable depth model and the weight-free models used to check the pipeline.

Any video depth estimator (Video Depth Anything, DepthCrafter, ...) plugs in through
:class:`VideoDepthModel`: frames ``(T, h, w, 3)`` and their cameras in, one map per frame out,
either optical-axis depth ("depth", up to one global scale) or affine-invariant inverse depth
("disparity"). No weights can be loaded here, so the reproduction uses emulators:
:class:`OracleDepth` (exact, by ray casting), :class:`ScaleDriftDepth` (per-frame log-scale
errors, independent or growing as consecutive frames overlap less) and :class:`SequentialAlign`
(a real temporal-consistency mechanism: each frame is aligned to the previous one through the
exact rotation homography between the two views).
"""

from __future__ import annotations

import math
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import torch
import torch.nn.functional as F

from paperkit import check_choice, check_int, check_real, check_tensor, describe, param_error
from st360d.geometry import CameraBatch, camera_rays, check_fov, focal
from st360d.scene import Scene

__all__ = ["OracleDepth", "ScaleDriftDepth", "SequentialAlign", "VideoDepthModel", "frame_overlap"]


@runtime_checkable
class VideoDepthModel(Protocol):
    """A video depth model: ``model(frames (T, h, w, 3), cameras) -> (T, h, w)``.

    ``kind = "depth"``: z along each optical axis, possibly up to one global scale;
    ``kind = "disparity"``: ``D_t = a / z_t + b`` with one affine ``(a, b)`` per call (clip).
    """

    kind: Literal["depth", "disparity"]

    def __call__(self, frames: torch.Tensor, cameras: CameraBatch) -> torch.Tensor: ...


def check_model(model: object, owner: str, name: str = "model") -> VideoDepthModel:
    """A callable with ``kind`` in {"depth", "disparity"}."""
    if not callable(model) or getattr(model, "kind", None) not in ("depth", "disparity"):
        raise param_error(
            name,
            owner,
            'a VideoDepthModel (callable with kind "depth" or "disparity")',
            describe(model),
            cls=TypeError,
        )
    return model  # type: ignore[return-value]


def check_output(out: object, frames: torch.Tensor, kind: str, owner: str) -> torch.Tensor:
    """A model output of shape ``(T, h, w)``, finite, and positive for depth."""
    T, h, w = frames.shape[:3]
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (T, h, w):
        raise param_error(
            "model", owner, f"a model returning a tensor of shape {(T, h, w)}", describe(out)
        )
    if not out.is_floating_point() or not bool(torch.isfinite(out).all()):
        raise param_error(
            "model", owner, "a model returning finite floating-point maps", describe(out)
        )
    if kind == "depth" and bool((out <= 0).any()):
        raise param_error("model", owner, "a depth model returning positive depth", describe(out))
    return out


def _check_frames(frames: object, cameras: object, owner: str) -> CameraBatch:
    if isinstance(frames, torch.Tensor) and frames.dtype == torch.uint8:
        raise param_error(
            "frames",
            owner,
            "a floating-point tensor (convert uint8 frames with x.float() / 255)",
            describe(frames),
            cls=TypeError,
        )
    check_tensor("frames", owner, frames, shape=("T", "h", "w", 3))
    if not isinstance(cameras, CameraBatch):
        raise param_error("cameras", owner, "a CameraBatch", describe(cameras), cls=TypeError)
    if len(cameras) != frames.shape[0] or tuple(cameras.size) != tuple(frames.shape[1:3]):
        raise param_error(
            "cameras",
            owner,
            f"one camera of size {tuple(frames.shape[1:3])} per frame ({frames.shape[0]})",
            f"{len(cameras)} of size {cameras.size}",
        )
    return cameras


class OracleDepth:
    """Exact optical-axis depth of a known :class:`Scene` by ray casting (verification only:
    it ignores the image). ``z`` of pixel ray ``r`` (unit z) is the hit parameter along ``R r``."""

    kind = "depth"

    def __init__(self, scene: Scene) -> None:
        if not isinstance(scene, Scene):
            raise param_error(
                "scene", "OracleDepth", "a st360d.Scene", describe(scene), cls=TypeError
            )
        self.scene = scene

    def __call__(self, frames: torch.Tensor, cameras: CameraBatch) -> torch.Tensor:
        cameras = _check_frames(frames, cameras, "OracleDepth")
        r = camera_rays(cameras.fov_deg, cameras.size)
        d = torch.einsum("tab,hwb->thwa", cameras.R.to(torch.float64), r)
        t, _, _ = self.scene.cast(d.reshape(-1, 3).numpy())
        return torch.from_numpy(t.reshape(d.shape[:3])).to(frames.dtype)


def frame_overlap(R_a: torch.Tensor, R_b: torch.Tensor, fov_deg: float, n: int = 16) -> float:
    """Fraction of frame b's area (an ``n x n`` grid of pixel rays) inside frame a's frustum
    (square frames, camera-to-world rotations ``R_a``, ``R_b``)."""
    owner = "frame_overlap"
    check_tensor("R_a", owner, R_a, shape=(3, 3))
    check_tensor("R_b", owner, R_b, shape=(3, 3))
    fov_deg = check_fov(fov_deg, owner)
    n = check_int("n", owner, n, low=1, high=1024)
    rays = camera_rays(fov_deg, (n, n)).reshape(-1, 3)
    c = rays @ (R_a.T.to(torch.float64) @ R_b.to(torch.float64)).T
    tx = math.tan(math.radians(fov_deg) / 2)
    cz = c[:, 2]
    inside = (cz > 0) & ((c[:, 0] / cz).abs() <= tx) & ((c[:, 1] / cz).abs() <= tx)
    return float(inside.double().mean())


class ScaleDriftDepth:
    """Emulates the scale errors of a depth model: frame t is ``exp(s_t)`` times the base model.

    ``mode="iid"``: ``s_t ~ N(0, σ²)`` independently (an image model run per patch).
    ``mode="overlap"``: a video-model emulator, ``s_0 ~ N(0, σ²)`` and
    ``s_t = s_{t−1} + σ (1 − o_t) ε_t``, where ``o_t`` is the fraction of frame t inside frame
    t−1 (:func:`frame_overlap`): full overlap keeps the scale, disjoint frames drift by σ.
    Each call draws new errors from ``seed`` and a call counter (deterministic per sequence).
    """

    def __init__(
        self, base: VideoDepthModel, mode: str = "iid", sigma: float = 0.2, seed: int = 0
    ) -> None:
        self.base = check_model(base, "ScaleDriftDepth", "base")
        if self.base.kind != "depth":
            raise param_error("base", "ScaleDriftDepth", 'a model of kind "depth"', self.base.kind)
        self.mode = check_choice("mode", "ScaleDriftDepth", mode, ("iid", "overlap"))
        self.sigma = check_real("sigma", "ScaleDriftDepth", sigma, low=0.0, high=3.0)
        self.seed = check_int("seed", "ScaleDriftDepth", seed, low=0)
        self.kind = "depth"
        self.calls = 0

    def log_scales(self, cameras: CameraBatch) -> np.ndarray:
        """The log-scales ``s_t`` of the next call (advances the call counter)."""
        rng = np.random.default_rng([self.seed, self.calls])
        self.calls += 1
        eps = rng.normal(size=len(cameras))
        if self.mode == "iid":
            return self.sigma * eps
        s = np.empty(len(cameras))
        s[0] = self.sigma * eps[0]
        for t in range(1, len(cameras)):
            o = frame_overlap(cameras.R[t - 1], cameras.R[t], cameras.fov_deg)
            s[t] = s[t - 1] + self.sigma * (1.0 - o) * eps[t]
        return s

    def __call__(self, frames: torch.Tensor, cameras: CameraBatch) -> torch.Tensor:
        cameras = _check_frames(frames, cameras, "ScaleDriftDepth")
        z = check_output(self.base(frames, cameras), frames, "depth", "ScaleDriftDepth")
        s = torch.as_tensor(np.exp(self.log_scales(cameras)), dtype=z.dtype)
        return z * s[:, None, None]


class SequentialAlign:
    """Temporal consistency without weights: frame t of a per-frame depth model is rescaled to
    agree with frame t−1 (already aligned) on their overlap.

    Frame t's pixel rays ``r`` map to frame t−1 by the rotation homography
    ``c = R_{t−1}ᵀ R_t r``; the point seen at depth ``z_{t−1}`` there has depth
    ``z' = z_{t−1}(c) / c_z`` in frame t. The scale is ``exp(median log(z' / z_t))`` over the
    pixels inside frame t−1 (the median ignores the few pixels on depth edges); frames that do
    not overlap their predecessor keep their own scale.
    """

    def __init__(self, model: VideoDepthModel) -> None:
        self.model = check_model(model, "SequentialAlign")
        if self.model.kind != "depth":
            raise param_error(
                "model", "SequentialAlign", 'a model of kind "depth"', self.model.kind
            )
        self.kind = "depth"

    def __call__(self, frames: torch.Tensor, cameras: CameraBatch) -> torch.Tensor:
        cameras = _check_frames(frames, cameras, "SequentialAlign")
        z = check_output(self.model(frames, cameras), frames, "depth", "SequentialAlign")
        z = z.to(torch.float64).clone()
        h, w = cameras.size
        r = camera_rays(cameras.fov_deg, (h, w)).reshape(-1, 3)
        f = focal(cameras.fov_deg, w)
        tx, ty = (w / 2) / f, (h / 2) / f
        R = cameras.R.to(torch.float64)
        for t in range(1, z.shape[0]):
            c = r @ (R[t - 1].T @ R[t]).T
            cz = c[:, 2]
            ok = cz > 1e-9
            xn, yn = c[:, 0] / cz.clamp(min=1e-9), c[:, 1] / cz.clamp(min=1e-9)
            ok &= (xn.abs() <= tx) & (yn.abs() <= ty)
            if int(ok.sum()) < 8:
                continue
            grid = torch.stack([xn[ok] / tx, -yn[ok] / ty], -1).reshape(1, 1, -1, 2)
            inv_prev = F.grid_sample(
                (1.0 / z[t - 1])[None, None],
                grid,
                mode="bilinear",
                padding_mode="border",
                align_corners=False,
            )[0, 0, 0]
            z_pred = 1.0 / (inv_prev * cz[ok])
            log_s = torch.median(torch.log(z_pred) - torch.log(z[t].reshape(-1)[ok]))
            z[t] = z[t] * torch.exp(log_s)
        return z.to(frames.dtype)
