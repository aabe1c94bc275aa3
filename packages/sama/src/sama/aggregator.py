"""SAMA's spatio-temporal context aggregator (paper Sec. 3.2), as a torch module.

Per frame, a spatial Q-Former compresses the patch tokens into ``n_spatial`` queries: each layer
runs self-attention over the queries *jointly with the instruction tokens*, cross-attention from
the queries to the frame's patch tokens (every other layer, starting with the first), and an MLP.
A temporal Q-Former (``n_temporal`` queries, ``n_layers`` layers) then cross-attends to the
spatial outputs of all frames, each frame's tokens carrying a sinusoidal temporal position.
Each referred region becomes one token: mask pooling of the projected frame features (mean over
the region's pixels in each frame, then over the frames where it is present; zeros when it is
never present) through a linear layer, plus an MLP embedding of the region's mask resized to
112 x 112 and averaged over frames (a shape cue).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import check_int, check_tensor, param_error

__all__ = ["SpatioTemporalContextAggregator"]

#: Side of the resized region mask fed to the shape MLP (the benchmark's 112 x 112 prompt masks).
SHAPE_SIDE = 112


class _QFormerLayer(nn.Module):
    def __init__(self, d: int, heads: int, cross: bool) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.self_attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.cross = cross
        if cross:
            self.norm2 = nn.LayerNorm(d)
            self.cross_attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm3 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor, n_query: int, memory: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]  # queries jointly with text
        q, rest = x[:, :n_query], x[:, n_query:]
        if self.cross:
            h = self.norm2(q)
            q = q + self.cross_attn(h, memory, memory, need_weights=False)[0]
        x = torch.cat([q, rest], dim=1)
        return x + self.mlp(self.norm3(x))


def _sinusoid(n: int, d: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    pos = torch.arange(n, device=device, dtype=torch.float32)[:, None]
    freq = torch.exp(
        torch.arange(0, d, 2, device=device, dtype=torch.float32) * (-math.log(10000.0) / d)
    )
    pe = torch.zeros(n, d, device=device)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq[: d // 2])
    return pe.to(dtype)


class SpatioTemporalContextAggregator(nn.Module):
    """Compress a video's patch features into ``n_temporal`` context tokens plus one token per
    referred region.

    Args:
        d_vis: width of the frame features. d_model: width of every output token.
        n_spatial, n_temporal: learnable queries of the spatial and temporal Q-Formers (32, 32).
        n_layers: layers of each Q-Former (2). n_heads: attention heads (d_model % n_heads == 0).

    ``forward(frame_feats (B, T, N, d_vis), text (B, L, d_model) or None, regions (B, R, T, h, w)
    or None) -> (B, n_temporal + R, d_model)``; region masks (boolean, or floats thresholded at
    0.5) live on the patch grid, h w = N; inputs of another floating dtype are cast to the
    module's.
    """

    def __init__(
        self,
        d_vis: int,
        d_model: int = 256,
        n_spatial: int = 32,
        n_temporal: int = 32,
        n_layers: int = 2,
        n_heads: int = 4,
    ) -> None:
        super().__init__()
        owner = "SpatioTemporalContextAggregator"
        self.d_vis = check_int("d_vis", owner, d_vis, low=1, high=65536)
        self.d_model = check_int("d_model", owner, d_model, low=2, high=65536)
        self.n_spatial = check_int("n_spatial", owner, n_spatial, low=1, high=4096)
        self.n_temporal = check_int("n_temporal", owner, n_temporal, low=1, high=4096)
        self.n_layers = check_int("n_layers", owner, n_layers, low=1, high=64)
        n_heads = check_int("n_heads", owner, n_heads, low=1, high=self.d_model)
        if self.d_model % n_heads or self.d_model % 2:
            raise param_error(
                "n_heads", owner, f"a divisor of d_model={self.d_model} (d_model even)", n_heads
            )
        d = self.d_model
        self.vis_proj = nn.Linear(self.d_vis, d)
        self.spatial_queries = nn.Parameter(torch.randn(self.n_spatial, d) * 0.02)
        self.spatial = nn.ModuleList(
            _QFormerLayer(d, n_heads, cross=(k % 2 == 0)) for k in range(self.n_layers)
        )
        self.temporal_queries = nn.Parameter(torch.randn(self.n_temporal, d) * 0.02)
        self.temporal = nn.ModuleList(
            _QFormerLayer(d, n_heads, cross=True) for _ in range(self.n_layers)
        )
        self.out_norm = nn.LayerNorm(d)
        self.region_proj = nn.Linear(d, d)
        self.shape_mlp = nn.Sequential(
            nn.Linear(SHAPE_SIDE * SHAPE_SIDE, d), nn.GELU(), nn.Linear(d, d)
        )

    def forward(
        self,
        frame_feats: torch.Tensor,
        text: torch.Tensor | None = None,
        regions: torch.Tensor | None = None,
    ) -> torch.Tensor:
        owner = "SpatioTemporalContextAggregator"
        dims: dict = {}
        check_tensor(
            "frame_feats", owner, frame_feats, shape=("B", "T", "N", self.d_vis), dims=dims
        )
        B, T, N, _ = frame_feats.shape
        if text is not None:
            check_tensor(
                "text",
                owner,
                text,
                shape=("B", None, self.d_model),
                dims=dims,
                device=frame_feats.device,
            )
        if regions is not None:
            check_tensor(
                "regions",
                owner,
                regions,
                shape=("B", None, "T", None, None),
                dims=dims,
                dtype=None,
                device=frame_feats.device,
            )
            if regions.dtype != torch.bool and not regions.is_floating_point():
                raise param_error(
                    "regions",
                    owner,
                    "a boolean or floating mask tensor",
                    f"a tensor of dtype {regions.dtype}",
                    cls=TypeError,
                )
            if regions.shape[-1] * regions.shape[-2] != N:
                raise param_error(
                    "regions",
                    owner,
                    f"masks on the patch grid, h * w = N = {N}",
                    f"h x w = {regions.shape[-2]} x {regions.shape[-1]}",
                )
        dtype = self.vis_proj.weight.dtype  # inputs of another float dtype are cast (documented)
        feats = self.vis_proj(frame_feats.to(dtype))  # (B, T, N, d)
        text = None if text is None else text.to(dtype)
        flat = feats.reshape(B * T, N, self.d_model)
        x = self.spatial_queries.to(flat.dtype).expand(B * T, -1, -1)
        if text is not None:
            x = torch.cat([x, text.to(flat.dtype).repeat_interleave(T, dim=0)], dim=1)
        for layer in self.spatial:
            x = layer(x, self.n_spatial, flat)
        spatial = x[:, : self.n_spatial].reshape(B, T, self.n_spatial, self.d_model)
        pe = _sinusoid(T, self.d_model, spatial.device, spatial.dtype)
        memory = (spatial + pe[None, :, None, :]).reshape(B, T * self.n_spatial, self.d_model)
        y = self.temporal_queries.to(memory.dtype).expand(B, -1, -1)
        for layer in self.temporal:
            y = layer(y, self.n_temporal, memory)
        out = self.out_norm(y)
        if regions is None or regions.shape[1] == 0:
            return out
        return torch.cat([out, self.region_tokens(feats, regions).to(out.dtype)], dim=1)

    def region_tokens(self, feats: torch.Tensor, regions: torch.Tensor) -> torch.Tensor:
        """(B, R, d): mask-pooled projected features (B, T, N, d) plus the shape embedding."""
        B, R, T, h, w = regions.shape
        m = (regions > 0.5 if regions.is_floating_point() else regions).to(feats.dtype)
        m = m.reshape(B, R, T, h * w)
        area = m.sum(-1)  # (B, R, T)
        pooled = torch.einsum("brtn,btnd->brtd", m, feats) / area.clamp_min(1.0)[..., None]
        present = (area > 0).to(feats.dtype)
        per_region = (pooled * present[..., None]).sum(2) / present.sum(2).clamp_min(1.0)[..., None]
        shape = F.interpolate(
            m.reshape(B * R * T, 1, h, w), size=(SHAPE_SIDE, SHAPE_SIDE), mode="nearest"
        )
        shape = shape.reshape(B, R, T, SHAPE_SIDE * SHAPE_SIDE).mean(2)
        return self.region_proj(per_region) + self.shape_mlp(shape)
