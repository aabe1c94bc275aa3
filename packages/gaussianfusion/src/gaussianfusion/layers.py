"""The Gaussian encoder (paper Sec. 3.2): dual-branch fusion of LiDAR and camera into Gaussians.

One :class:`GaussianEncoderLayer` does, in order:

a. local explicit branch: sample points p_ik = mu_i + L_i u_k with L_i = chol(Sigma_i) and the
   sigma points u_k in {(+-1, 0), (0, +-1)}, plus mu_i; LiDAR BEV features are read at each point
   by bilinear interpolation (``grid_sample``) and camera features at the panorama column of the
   point's azimuth (ground-plane assumption); a softmax over points (weights from f^e) mixes them
   and f^e <- LN(f^e + MLP(mix));
b. global implicit branch: f^m <- LN(f^m + MHA(f^m, tokens)) over all camera and LiDAR tokens;
c. Gaussian self-attention over [f^e; f^m] + PE(mu, l, theta), then a feed-forward block;
d. bounded property refinement from f^e: mu += 2 tanh(.) metres, l += 0.5 tanh(.),
   theta += 0.5 tanh(.), a += tanh(.), q += (.).

Camera features are a panorama (B, C, Hc, Wc): column u looks at azimuth pi - (u + 1/2) 2 pi / Wc.
LiDAR features are a BEV map (B, C, H, W) over ``extent`` (rows along x).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from gaussianfusion.gaussians import (
    DEFAULT_EXTENT,
    Extent,
    Gaussians2D,
    check_dtype,
    check_extent,
    check_gaussians,
    covariance,
)
from paperkit import check_choice, check_int, check_tensor, param_error

__all__ = ["GaussianEncoderLayer", "GaussianFusionEncoder", "sample_points"]

SIGMA_POINTS = ((1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0))
BRANCHES = ("both", "explicit", "implicit")


def sample_points(g: Gaussians2D, n_points: int = 4) -> torch.Tensor:
    """mu_i followed by mu_i + chol(Sigma_i) u_k for the first ``n_points`` sigma points:
    shape (B, N, 1 + n_points, 2)."""
    chol = torch.linalg.cholesky(covariance(g))  # (B, N, 2, 2)
    u = torch.tensor(SIGMA_POINTS[:n_points], dtype=g.mean.dtype, device=g.mean.device)
    offs = torch.einsum("bnij,kj->bnki", chol, u)
    return torch.cat([g.mean[:, :, None], g.mean[:, :, None] + offs], 2)


def _bev_grid(points: torch.Tensor, extent: Extent) -> torch.Tensor:
    """grid_sample coordinates (x_norm -> columns = y, y_norm -> rows = x)."""
    (x0, x1), (y0, y1) = extent
    gx = 2 * (points[..., 1] - y0) / (y1 - y0) - 1
    gy = 2 * (points[..., 0] - x0) / (x1 - x0) - 1
    return torch.stack([gx, gy], -1)


def _azimuth_grid(points: torch.Tensor) -> torch.Tensor:
    """Panorama column coordinate in [-1, 1] of each point's azimuth (left edge = +pi)."""
    az = torch.atan2(points[..., 1], points[..., 0])
    return torch.stack([-az / math.pi, torch.zeros_like(az)], -1)


def _mlp(d_in: int, d_out: int, hidden: int | None = None) -> nn.Sequential:
    hidden = hidden or d_in
    return nn.Sequential(nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, d_out))


class GaussianEncoderLayer(nn.Module):
    """One encoder layer (module docstring, steps a-d).

    Args:
        d_e, d_m: explicit and implicit feature sizes.
        n_heads: attention heads (global branch and self-attention).
        n_points: sigma points per Gaussian (1 to 4; the mean is always sampled too).
        d_sensor: channels of the LiDAR and camera feature maps (default d_e).
        n_classes: semantic classes S of q_i.
        extent: the BEV extent of the LiDAR map.
        branches: ``"both"``, ``"explicit"`` (no global branch) or ``"implicit"`` (no local
            branch): the paper's ablation of the two branches (Table 4).
    """

    def __init__(
        self,
        d_e: int,
        d_m: int,
        n_heads: int = 4,
        n_points: int = 4,
        *,
        d_sensor: int | None = None,
        n_classes: int = 5,
        extent: Extent = DEFAULT_EXTENT,
        branches: str = "both",
    ) -> None:
        super().__init__()
        owner = "GaussianEncoderLayer"
        self.d_e = check_int("d_e", owner, d_e, low=1, high=4096)
        self.d_m = check_int("d_m", owner, d_m, low=1, high=4096)
        self.n_heads = check_int("n_heads", owner, n_heads, low=1, high=64)
        if d_e % n_heads or d_m % n_heads:
            raise param_error("n_heads", owner, f"a divisor of d_e={d_e} and d_m={d_m}", n_heads)
        self.n_points = check_int("n_points", owner, n_points, low=1, high=4)
        c = self.d_sensor = check_int("d_sensor", owner, d_sensor or d_e, low=1, high=4096)
        self.n_classes = check_int("n_classes", owner, n_classes, low=1, high=1024)
        self.extent = check_extent("extent", owner, extent)
        self.branches = check_choice("branches", owner, branches, BRANCHES)
        p = 1 + self.n_points
        # a. local explicit branch
        self.point_proj = nn.Linear(2 * c, d_e)
        self.point_weights = nn.Linear(d_e, p)
        self.local_mlp = _mlp(d_e, d_e, 2 * d_e)
        self.local_norm = nn.LayerNorm(d_e)
        # b. global implicit branch
        self.cross = nn.MultiheadAttention(d_m, n_heads, kdim=c, vdim=c, batch_first=True)
        self.cross_norm = nn.LayerNorm(d_m)
        # c. Gaussian self-attention with property encodings
        d = d_e + d_m
        self.prop_enc = _mlp(6, d, d)
        self.self_attn = nn.MultiheadAttention(d, n_heads, batch_first=True)
        self.self_norm = nn.LayerNorm(d)
        self.ffn = _mlp(d, d, 2 * d)
        self.ffn_norm = nn.LayerNorm(d)
        # d. bounded property refinement
        self.refine = _mlp(d_e, 2 + 2 + 1 + 1 + self.n_classes, d_e)
        nn.init.zeros_(self.refine[-1].weight)
        nn.init.zeros_(self.refine[-1].bias)

    def property_encoding(self, g: Gaussians2D) -> torch.Tensor:
        """PE(mu, l, theta) = MLP(mu / half-extent, l, cos theta, sin theta), (B, N, d_e + d_m)."""
        (x0, x1), (y0, y1) = self.extent
        mu = torch.stack(
            [
                (2 * g.mean[..., 0] - x0 - x1) / (x1 - x0),
                (2 * g.mean[..., 1] - y0 - y1) / (y1 - y0),
            ],
            -1,
        )
        feats = [
            mu,
            g.log_scale,
            torch.cos(g.rotation)[..., None],
            torch.sin(g.rotation)[..., None],
        ]
        return self.prop_enc(torch.cat(feats, -1))

    def _local(self, g: Gaussians2D, lidar: torch.Tensor, cam: torch.Tensor) -> torch.Tensor:
        pts = sample_points(g, self.n_points)  # (B, N, P, 2)
        lid = F.grid_sample(lidar, _bev_grid(pts, self.extent), align_corners=False)
        cam_row = cam.mean(2, keepdim=True)  # (B, C, 1, Wc): one feature per azimuth column
        b, n, p, _ = pts.shape
        grid = _azimuth_grid(pts).reshape(b, 1, n * p, 2)
        cm = F.grid_sample(cam_row, grid, align_corners=False).reshape(b, -1, n, p)
        per_point = self.point_proj(torch.cat([lid, cm], 1).permute(0, 2, 3, 1))  # (B,N,P,d_e)
        w = torch.softmax(self.point_weights(g.explicit), -1)
        mixed = (w[..., None] * per_point).sum(2)
        return self.local_norm(g.explicit + self.local_mlp(mixed))

    def _refine(self, g: Gaussians2D, f_e: torch.Tensor) -> Gaussians2D:
        r = self.refine(f_e)
        d_mu, d_l, d_th, d_a, d_q = r.split([2, 2, 1, 1, self.n_classes], -1)
        return g.replace(
            mean=g.mean + 2.0 * torch.tanh(d_mu),
            log_scale=g.log_scale + 0.5 * torch.tanh(d_l),
            rotation=g.rotation + 0.5 * torch.tanh(d_th[..., 0]),
            opacity_logit=g.opacity_logit + torch.tanh(d_a[..., 0]),
            semantic=g.semantic + d_q,
        )

    def forward(
        self, g: Gaussians2D, lidar_feat: torch.Tensor, cam_feat: torch.Tensor
    ) -> Gaussians2D:
        """Refine ``g`` with ``lidar_feat`` (B, C, H, W) and ``cam_feat`` (B, C, Hc, Wc)."""
        owner = type(self).__name__
        g = check_gaussians("g", owner, g)
        _check_features(
            owner, g, lidar_feat, cam_feat, self.d_sensor, self.d_e, self.d_m, self.n_classes
        )
        for name, t in (("g", g.mean), ("lidar_feat", lidar_feat), ("cam_feat", cam_feat)):
            check_dtype(name, owner, t, self)
        f_e, f_m = g.explicit, g.implicit
        if self.branches != "implicit":
            f_e = self._local(g, lidar_feat, cam_feat)
        if self.branches != "explicit":
            tokens = torch.cat([lidar_feat.flatten(2), cam_feat.flatten(2)], 2).transpose(1, 2)
            f_m = self.cross_norm(f_m + self.cross(f_m, tokens, tokens, need_weights=False)[0])
        x = torch.cat([f_e, f_m], -1)
        q = x + self.property_encoding(g)
        x = self.self_norm(x + self.self_attn(q, q, x, need_weights=False)[0])
        x = self.ffn_norm(x + self.ffn(x))
        f_e, f_m = x.split([self.d_e, self.d_m], -1)
        return self._refine(g, f_e).replace(explicit=f_e, implicit=f_m)


def _check_features(owner, g, lidar_feat, cam_feat, c, d_e, d_m, n_classes) -> None:
    dims = {"B": (g.batch, "g")}
    check_tensor("lidar_feat", owner, lidar_feat, shape=("B", c, None, None), dims=dims)
    check_tensor("cam_feat", owner, cam_feat, shape=("B", c, None, None), dims=dims)
    if g.explicit.shape[-1] != d_e or g.implicit.shape[-1] != d_m:
        raise param_error(
            "g",
            owner,
            f"features of sizes d_e={d_e}, d_m={d_m}",
            f"d_e={g.explicit.shape[-1]}, d_m={g.implicit.shape[-1]}",
        )
    if g.semantic.shape[-1] != n_classes:
        raise param_error("g", owner, f"{n_classes} semantic classes", str(g.semantic.shape[-1]))


class GaussianFusionEncoder(nn.Module):
    """``n_layers`` :class:`GaussianEncoderLayer` in sequence (Sec. 3.2; L = 3 in the paper).

    forward(g, lidar_feat (B, C, H, W), cam_feat (B, C, Hc, Wc)) -> Gaussians2D; with
    ``return_all=True`` the list of the Gaussians after every layer.
    """

    def __init__(
        self,
        n_layers: int = 3,
        d_e: int = 64,
        d_m: int = 64,
        n_heads: int = 4,
        n_points: int = 4,
        **layer_kwargs,
    ) -> None:
        super().__init__()
        n_layers = check_int("n_layers", "GaussianFusionEncoder", n_layers, low=1, high=64)
        self.layers = nn.ModuleList(
            GaussianEncoderLayer(d_e, d_m, n_heads, n_points, **layer_kwargs)
            for _ in range(n_layers)
        )

    def forward(
        self,
        g: Gaussians2D,
        lidar_feat: torch.Tensor,
        cam_feat: torch.Tensor,
        return_all: bool = False,
    ) -> Gaussians2D | list[Gaussians2D]:
        steps = []
        for layer in self.layers:
            g = layer(g, lidar_feat, cam_feat)
            steps.append(g)
        return steps if return_all else g
