r"""Token mixers on (B, C, H, W) feature maps: the GSPN-2 block, the GSPN-1 baseline and softmax
attention.

GSPN-2 mixer (channel-shared propagation in a compact proxy space):

.. math::

    z &= \mathrm{SiLU}(\mathrm{DWConv}_{3\times3}(\mathrm{Linear}_{C \to C_{in}}(x))),\quad
        C_{in} = 2C \\
    p &= \mathrm{Linear}_{C_{in} \to C_p}(z),\quad s = \mathrm{Linear}_{C_{in} \to d_s}(z) \\
    w &= \mathrm{normalize}(\mathrm{Linear}_{d_s \to 4 \cdot 3 \cdot G}(s)),\quad
        \lambda = \sigma(\mathrm{Linear}_{d_s \to 4 C_p}(s)),\quad
        u, d = \mathrm{Linear}_{d_s \to 4 C_p}(s) \\
    y &= \mathrm{Linear}_{C_{in} \to C}(\mathrm{LN}(\mathrm{Linear}_{C_p \to C_{in}}(
        \mathrm{GSPN}_{4\,dir}(p; w, \lambda, u, d))))

with G = ``groups`` shared weight groups (1: one affinity map for every channel). The GSPN-1
baseline propagates all C_in channels with per-channel weights (4·3·C_in gate channels), no proxy.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from gspn2.ops import DIRECTIONS, Backend, _check_chunk, gspn_4dir, normalize_weights
from paperkit import param_error

__all__ = ["GSPN1Mixer", "GSPN2Mixer", "SoftmaxMixer"]


def _positive_int(value: object, name: str, owner: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise param_error(name, owner, "a positive integer", value)
    return value


class GSPN2Mixer(nn.Module):
    """The GSPN-2 token mixer, (B, dim, H, W) -> (B, dim, H, W).

    Args:
        dim: channels C of the input and output.
        proxy_dim: channels C_p of the compact proxy space the propagation runs in (the paper
            benchmarks 8); None propagates all C_in = 2C channels (GSPN-1).
        d_state: width d_s of the gate generator's bottleneck.
        shared: channel-shared propagation weights (GSPN-2); False gives every propagated channel
            its own weights (GSPN-1).
        groups: number of shared weight groups G (must divide the propagated channels).
        chunk: local propagation windows of ``chunk`` lines; None is the global scan.
        backend: scan backend, see :func:`gspn2.ops.gspn_scan`.
    """

    def __init__(
        self,
        dim: int,
        proxy_dim: int | None = 8,
        d_state: int = 16,
        shared: bool = True,
        groups: int = 1,
        chunk: int | None = None,
        backend: Backend = "auto",
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        _positive_int(dim, "dim", owner)
        _positive_int(d_state, "d_state", owner)
        _positive_int(groups, "groups", owner)
        if proxy_dim is not None:
            _positive_int(proxy_dim, "proxy_dim", owner)
        _check_chunk(chunk, owner)
        inner = 2 * dim
        prop = proxy_dim or inner
        n_groups = groups if shared else prop
        if prop % n_groups:
            raise param_error(
                "groups", owner, f"a divisor of the {prop} propagated channels", groups
            )
        self.dim, self.prop_dim, self.groups = dim, prop, n_groups
        self.chunk, self.backend = chunk, backend
        self.in_proj = nn.Linear(dim, inner)
        self.dwconv = nn.Conv2d(inner, inner, 3, padding=1, groups=inner)
        self.proxy = nn.Linear(inner, prop) if proxy_dim else nn.Identity()
        self.gate = nn.Linear(inner, d_state)
        self.to_w = nn.Linear(d_state, 4 * 3 * n_groups)
        self.to_lam = nn.Linear(d_state, 4 * prop)
        self.to_u = nn.Linear(d_state, 4 * prop)
        self.to_d = nn.Linear(d_state, 4 * prop)
        self.mix = nn.Parameter(torch.full((4,), 0.25))
        self.out_proxy = nn.Linear(prop, inner) if proxy_dim else nn.Identity()
        self.norm = nn.LayerNorm(inner)
        self.out_proj = nn.Linear(inner, dim)

    def propagation_parameters(self) -> int:
        """Parameters of the gate heads that produce the propagation weights w."""
        return sum(p.numel() for p in self.to_w.parameters())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or x.dim() != 4 or x.shape[1] != self.dim:
            shown = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise param_error("x", type(self).__name__, f"a (B, {self.dim}, H, W) tensor", shown)
        z = self.in_proj(rearrange(x, "b c h w -> b h w c"))
        z = F.silu(self.dwconv(rearrange(z, "b h w c -> b c h w")))
        z = rearrange(z, "b c h w -> b h w c")
        p = rearrange(self.proxy(z), "b h w c -> b c h w")
        s = self.gate(z)
        raw = rearrange(self.to_w(s), "b h w (k n g) -> k n b g h w", k=4, n=3)
        weights = {
            direction: normalize_weights(*raw[k], axis=-2 if direction in ("lr", "rl") else -1)
            for k, direction in enumerate(DIRECTIONS)
        }
        lam, u, d = (
            rearrange(head(s), "b h w (k c) -> b k c h w", k=4)
            for head in (self.to_lam, self.to_u, self.to_d)
        )
        y = gspn_4dir(p, weights, torch.sigmoid(lam), u, d, self.mix, self.chunk, self.backend)
        y = self.norm(self.out_proxy(rearrange(y, "b c h w -> b h w c")))
        return rearrange(self.out_proj(y), "b h w c -> b c h w")


class GSPN1Mixer(GSPN2Mixer):
    """The GSPN-1 baseline: per-channel propagation weights on all C_in = 2·dim channels, no
    proxy; otherwise the GSPN-2 block (same gate generator, merge and projections)."""

    def __init__(
        self,
        dim: int,
        d_state: int = 16,
        chunk: int | None = None,
        backend: Backend = "auto",
    ) -> None:
        super().__init__(dim, None, d_state, shared=False, chunk=chunk, backend=backend)


class SoftmaxMixer(nn.Module):
    r"""Multi-head softmax self-attention over the H·W tokens, (B, dim, H, W) -> same:
    :math:`\mathrm{softmax}(QK^\top/\sqrt{d_h})V` (torch's fused SDPA), the baseline GSPN replaces.
    """

    def __init__(self, dim: int, heads: int = 4) -> None:
        super().__init__()
        _positive_int(dim, "dim", "SoftmaxMixer")
        if dim % _positive_int(heads, "heads", "SoftmaxMixer"):
            raise param_error("heads", "SoftmaxMixer", f"a divisor of dim={dim}", heads)
        self.dim, self.heads = dim, heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        height, width = x.shape[-2:]
        tokens = rearrange(x, "b c h w -> b (h w) c")
        q, k, v = rearrange(self.qkv(tokens), "b n (t m e) -> t b m n e", t=3, m=self.heads)
        out = rearrange(F.scaled_dot_product_attention(q, k, v), "b m n e -> b n (m e)")
        return rearrange(self.proj(out), "b (h w) c -> b c h w", h=height, w=width)
