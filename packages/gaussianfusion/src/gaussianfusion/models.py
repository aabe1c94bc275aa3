"""GaussianFusion and the two fusion baselines of the paper (Sec. 4), one interface.

Every planner takes a ``batch`` dict (``lidar`` (B, 2, H, W), ``camera`` (B, 3, Hc, Wc), ``ego``
(B, 4), ``command`` (B,), and for the loss ``expert`` (B, 8, 2) and ``bev_sem`` (B, H, W)), as
:func:`gaussianfusion.make_driving_scenes` returns, and:

- ``forward(batch) -> dict`` with ``traj`` (B, 8, 2), the planned trajectory;
- ``loss(batch, out) -> (total, parts)``.

Sensor encoders: a CNN of stride 4 per sensor (LiDAR 64x64 -> 16x16 tokens, camera 32x128 ->
8x32 tokens) with learned positional embeddings.

- :class:`GaussianFusionPlanner`: Gaussians (init on a grid, learned per-index embeddings) ->
  :class:`~gaussianfusion.layers.GaussianFusionEncoder` -> :class:`~gaussianfusion.planning.
  CascadePlanningHead`; L = sum_s L_plan^s + 1.0 L_sem with L_sem the cross-entropy of the
  splatted, normalised semantic map (Sec. 3.3, 3.5).
- :class:`BEVFusionPlanner`: dense BEV fusion: the LiDAR raster concatenated with camera
  features lifted along azimuth rays onto the BEV grid, a CNN, a BEV semantic head and a
  single-shot MLP planner.
- :class:`FlattenFusionPlanner`: flatten fusion (TransFuser-lite): LiDAR and camera tokens, an
  ego/command token, global self-attention, an MLP planner.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F
from torch import nn

from gaussianfusion.gaussians import Gaussians2D, check_dtype, check_hw, init_uniform, splat
from gaussianfusion.layers import BRANCHES, GaussianFusionEncoder, _azimuth_grid
from gaussianfusion.planning import CascadePlanningHead, cascade_loss
from paperkit import check_int, check_real, check_tensor, param_error

__all__ = [
    "BEVFusionPlanner",
    "FlattenFusionPlanner",
    "GaussianFusionPlanner",
    "check_batch",
    "sem_targets",
]

N_WAYPOINTS = 8
DT = 0.5
N_CLASSES = 5


def check_batch(
    owner: str, batch: object, *, targets: bool = False, module: nn.Module | None = None
) -> Mapping:
    """Refuse a batch dict whose tensors are missing, non-finite or of mismatched batch sizes
    (a ValueError/TypeError naming 'batch')."""
    if not isinstance(batch, Mapping):
        raise param_error("batch", owner, "a dict of tensors", type(batch).__name__, cls=TypeError)
    spec = {
        "lidar": (("B", 2, None, None), "float"),
        "camera": (("B", 3, None, None), "float"),
        "ego": (("B", 4), "float"),
        "command": (("B",), "int"),
    }
    if targets:
        spec["expert"] = (("B", N_WAYPOINTS, 2), "float")
        spec["bev_sem"] = (("B", None, None), "int")
    dims: dict = {}
    for key, (shape, dtype) in spec.items():
        if key not in batch:
            raise param_error("batch", owner, f"a dict with the key {key!r}", "a dict without it")
        try:
            check_tensor(f"batch['{key}']", owner, batch[key], shape=shape, dims=dims, dtype=dtype)
            if module is not None and dtype == "float":
                check_dtype(f"batch['{key}']", owner, batch[key], module)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"The 'batch' parameter of {owner}: {exc}") from None
    if bool(((batch["command"] < 0) | (batch["command"] > 2)).any()):
        raise param_error("batch", owner, "commands in {0, 1, 2}", "other values")
    return batch


def sem_targets(bev_sem: torch.Tensor, hw: tuple[int, int]) -> torch.Tensor:
    """Down-sample BEV labels (B, H, W) to ``hw`` by majority vote over each block (ties go to
    the lower class index)."""
    one_hot = F.one_hot(bev_sem, N_CLASSES).permute(0, 3, 1, 2).float()
    return F.adaptive_avg_pool2d(one_hot, hw).argmax(1)


def _conv(c_in: int, c_out: int, stride: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1), nn.GroupNorm(4, c_out), nn.GELU())


class SensorEncoder(nn.Module):
    """Stride-4 CNN with a learned positional embedding of the (h, w) output tokens."""

    def __init__(self, c_in: int, d: int, out_hw: tuple[int, int]) -> None:
        super().__init__()
        self.net = nn.Sequential(_conv(c_in, d // 2, 2), _conv(d // 2, d, 2), _conv(d, d, 1))
        self.pos = nn.Parameter(0.02 * torch.randn(1, d, *out_hw))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.net(x)
        if y.shape[-2:] != self.pos.shape[-2:]:
            pos = F.interpolate(self.pos, size=y.shape[-2:], mode="bilinear", align_corners=False)
            return y + pos
        return y + self.pos


def _cv_prior(ego: torch.Tensor) -> torch.Tensor:
    """Constant-velocity trajectory (B, 8, 2) from the ego speed."""
    t = DT * torch.arange(1, N_WAYPOINTS + 1, dtype=ego.dtype, device=ego.device)
    return torch.stack([ego[:, :1] * t, torch.zeros_like(ego[:, :1] * t)], -1)


class GaussianFusionPlanner(nn.Module):
    """GaussianFusion (module docstring). Defaults are this package's CPU size (8x8 Gaussians,
    d_e = d_m = 32, 2 layers); the paper uses 16x16, 64, 3.

    Args:
        grid: Gaussians per axis at initialisation. d: d_e = d_m. n_layers: encoder layers.
        n_stages, n_anchors: the cascade head. sem_hw: grid of the splatted L_sem.
        sem_weight: weight of L_sem (1.0). branches: ``"both"``, ``"explicit"``, ``"implicit"``
        (the branch ablation). geometric_bias: the head's attention bias.
    """

    def __init__(
        self,
        grid: tuple[int, int] = (8, 8),
        d: int = 32,
        n_layers: int = 2,
        n_stages: int = 3,
        n_anchors: int = 16,
        *,
        n_heads: int = 4,
        sem_hw: tuple[int, int] = (32, 32),
        sem_weight: float = 1.0,
        branches: str = "both",
        geometric_bias: bool = True,
        extent: float = 32.0,
    ) -> None:
        super().__init__()
        owner = "GaussianFusionPlanner"
        d = check_int("d", owner, d, low=4, high=1024)
        n_heads = check_int("n_heads", owner, n_heads, low=1, high=64)
        if d % n_heads:
            raise param_error("d", owner, f"a multiple of n_heads={n_heads}", d)
        gx, gy = check_hw("grid", owner, grid)
        if gx * gy > 16384:
            raise param_error("grid", owner, "at most 16384 Gaussians", repr(grid))
        self.grid, self.d = (gx, gy), d
        self.sem_hw = check_hw("sem_hw", owner, sem_hw)
        self.sem_weight = check_real("sem_weight", owner, sem_weight, low=0)
        if branches not in BRANCHES:
            raise param_error("branches", owner, f"one of {BRANCHES}", repr(branches))
        e = check_real("extent", owner, extent, low=1.0, high=1000.0)
        self.extent = ((-e, e), (-e, e))
        self.lidar_enc = SensorEncoder(2, d, (16, 16))
        self.cam_enc = SensorEncoder(3, d, (8, 32))
        self.embed_e = nn.Parameter(0.02 * torch.randn(gx * gy, d))
        self.embed_m = nn.Parameter(0.02 * torch.randn(gx * gy, d))
        self.encoder = GaussianFusionEncoder(
            n_layers,
            d,
            d,
            n_heads,
            4,
            d_sensor=d,
            n_classes=N_CLASSES,
            extent=self.extent,
            branches=branches,
        )
        self.head = CascadePlanningHead(
            n_anchors, N_WAYPOINTS, n_stages, d, n_heads=n_heads, geometric_bias=geometric_bias
        )

    def set_anchors(self, trajs: torch.Tensor, seed: int = 0) -> GaussianFusionPlanner:
        """k-means anchors of the head from training expert trajectories (M, 8, 2)."""
        self.head.set_anchors(trajs, seed)
        return self

    def gaussians(self, batch_size: int, like: torch.Tensor) -> Gaussians2D:
        g = init_uniform(
            batch_size,
            self.grid,
            self.extent,
            self.d,
            self.d,
            N_CLASSES,
            dtype=like.dtype,
            device=like.device,
        )
        return g.replace(explicit=g.explicit + self.embed_e, implicit=g.implicit + self.embed_m)

    def forward(self, batch: Mapping[str, torch.Tensor]) -> dict:
        check_batch(type(self).__name__, batch, module=self)
        lidar = self.lidar_enc(batch["lidar"])
        cam = self.cam_enc(batch["camera"])
        g = self.encoder(self.gaussians(lidar.shape[0], lidar), lidar, cam)
        out = self.head(g, batch["ego"], batch["command"])
        return {**out, "traj": out["best"], "gaussians": g}

    def semantic_map(self, g: Gaussians2D) -> torch.Tensor:
        """The splatted, normalised semantic map (B, S, *sem_hw) (Sec. 3.3)."""
        return splat(g, torch.softmax(g.semantic, -1), self.sem_hw, self.extent, normalize=True)

    def loss(self, batch: Mapping[str, torch.Tensor], out: dict) -> tuple[torch.Tensor, dict]:
        check_batch("GaussianFusionPlanner.loss", batch, targets=True)
        plan = cascade_loss(out, batch["expert"])
        probs = self.semantic_map(out["gaussians"])
        target = sem_targets(batch["bev_sem"], self.sem_hw)
        sem = F.nll_loss(torch.log(probs.clamp(min=1e-6)), target)
        total = plan + self.sem_weight * sem
        return total, {"plan": plan.item(), "sem": sem.item()}


class BEVFusionPlanner(nn.Module):
    """Dense BEV fusion baseline (module docstring): every BEV cell gets the camera feature of
    its azimuth column, concatenated with the LiDAR raster at full resolution (64x64)."""

    def __init__(self, d: int = 32, *, sem_weight: float = 1.0, extent: float = 32.0) -> None:
        super().__init__()
        owner = "BEVFusionPlanner"
        d = check_int("d", owner, d, low=4, high=1024)
        self.sem_weight = check_real("sem_weight", owner, sem_weight, low=0)
        self.extent = check_real("extent", owner, extent, low=1.0, high=1000.0)
        self.cam_enc = SensorEncoder(3, d, (8, 32))
        self.bev = nn.Sequential(_conv(2 + d, d, 1), _conv(d, d, 2))  # 64 -> 32
        self.sem_head = nn.Conv2d(d, N_CLASSES, 1)
        self.down = nn.Sequential(_conv(d, d, 2), _conv(d, d, 2))  # 32 -> 8
        self.cond = nn.Linear(4 + 3, d)
        self.plan = nn.Sequential(
            nn.Linear(d * 64 + d, 4 * d), nn.GELU(), nn.Linear(4 * d, 2 * N_WAYPOINTS)
        )

    def lift(self, cam: torch.Tensor, hw: tuple[int, int]) -> torch.Tensor:
        """Camera features (B, C, Hc, Wc) lifted along azimuth rays to a BEV grid (B, C, H, W)."""
        h, w = hw
        e = self.extent
        xs = -e + (torch.arange(h, dtype=cam.dtype, device=cam.device) + 0.5) * 2 * e / h
        ys = -e + (torch.arange(w, dtype=cam.dtype, device=cam.device) + 0.5) * 2 * e / w
        pts = torch.stack(torch.meshgrid(xs, ys, indexing="ij"), -1).reshape(1, h * w, 2)
        grid = _azimuth_grid(pts)[:, None].expand(cam.shape[0], -1, -1, -1)
        col = F.grid_sample(cam.mean(2, keepdim=True), grid, align_corners=False)
        return col.reshape(cam.shape[0], -1, h, w)

    def forward(self, batch: Mapping[str, torch.Tensor]) -> dict:
        check_batch(type(self).__name__, batch, module=self)
        lidar = batch["lidar"]
        cam = self.lift(self.cam_enc(batch["camera"]), lidar.shape[-2:])
        x = self.bev(torch.cat([lidar, cam], 1))
        sem = self.sem_head(x)
        z = F.adaptive_avg_pool2d(self.down(x), (8, 8)).flatten(1)
        cond = self.cond(torch.cat([batch["ego"] / 10.0, F.one_hot(batch["command"], 3).to(z)], 1))
        delta = self.plan(torch.cat([z, cond], 1)).reshape(-1, N_WAYPOINTS, 2)
        return {"traj": _cv_prior(batch["ego"]) + 5.0 * delta, "sem_logits": sem}

    def loss(self, batch: Mapping[str, torch.Tensor], out: dict) -> tuple[torch.Tensor, dict]:
        check_batch("BEVFusionPlanner.loss", batch, targets=True)
        plan = (out["traj"] - batch["expert"]).abs().mean()
        target = sem_targets(batch["bev_sem"], out["sem_logits"].shape[-2:])
        sem = F.cross_entropy(out["sem_logits"], target)
        return plan + self.sem_weight * sem, {"plan": plan.item(), "sem": sem.item()}


class FlattenFusionPlanner(nn.Module):
    """Flatten fusion baseline, TransFuser-lite (module docstring): 256 LiDAR + 256 camera tokens
    and one ego/command token through ``n_layers`` layers of global self-attention."""

    def __init__(self, d: int = 32, n_layers: int = 2, *, n_heads: int = 4) -> None:
        super().__init__()
        owner = "FlattenFusionPlanner"
        d = check_int("d", owner, d, low=4, high=1024)
        n_layers = check_int("n_layers", owner, n_layers, low=1, high=64)
        n_heads = check_int("n_heads", owner, n_heads, low=1, high=64)
        if d % n_heads:
            raise param_error("d", owner, f"a multiple of n_heads={n_heads}", d)
        self.lidar_enc = SensorEncoder(2, d, (16, 16))
        self.cam_enc = SensorEncoder(3, d, (8, 32))
        self.cond = nn.Linear(4 + 3, d)
        layer = nn.TransformerEncoderLayer(
            d, n_heads, 2 * d, dropout=0.0, batch_first=True, norm_first=True
        )
        self.fusion = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.plan = nn.Sequential(
            nn.Linear(2 * d, 4 * d), nn.GELU(), nn.Linear(4 * d, 2 * N_WAYPOINTS)
        )

    def forward(self, batch: Mapping[str, torch.Tensor]) -> dict:
        check_batch(type(self).__name__, batch, module=self)
        lid = self.lidar_enc(batch["lidar"]).flatten(2).transpose(1, 2)
        cam = self.cam_enc(batch["camera"]).flatten(2).transpose(1, 2)
        cmd = F.one_hot(batch["command"], 3).to(lid)
        cond = self.cond(torch.cat([batch["ego"] / 10.0, cmd], 1))[:, None]
        x = self.fusion(torch.cat([cond, lid, cam], 1))
        z = torch.cat([x[:, 0], x[:, 1:].mean(1)], -1)
        delta = self.plan(z).reshape(-1, N_WAYPOINTS, 2)
        return {"traj": _cv_prior(batch["ego"]) + 5.0 * delta}

    def loss(self, batch: Mapping[str, torch.Tensor], out: dict) -> tuple[torch.Tensor, dict]:
        check_batch("FlattenFusionPlanner.loss", batch, targets=True)
        plan = (out["traj"] - batch["expert"]).abs().mean()
        return plan, {"plan": plan.item()}
