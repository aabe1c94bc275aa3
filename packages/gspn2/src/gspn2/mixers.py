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

from collections.abc import Callable, Mapping
from typing import Any

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from gspn2.ops import (
    BACKENDS,
    DIRECTIONS,
    Backend,
    check_chunk,
    four_directions,
    resolve,
    stable_weights,
)
from paperkit import check_bool, check_choice, check_int, check_memory, check_tensor, param_error

__all__ = ["GSPN1Mixer", "GSPN2Mixer", "SoftmaxMixer", "check_parameter_memory", "check_input"]


def check_parameter_memory(
    owner: str,
    count: Callable[..., int],
    sizes: Mapping[str, Any],
    smallest: Mapping[str, Any],
) -> None:
    """Refuse a module whose ``count(**sizes)`` parameters (in torch's default dtype) would not
    fit in memory, before any is allocated. The error names the size argument the count depends
    on most: the one whose value in ``smallest`` shrinks the count the most."""
    total = count(**sizes)
    culprit = min(smallest, key=lambda name: count(**{**sizes, name: smallest[name]}))
    itemsize = torch.empty((), dtype=torch.get_default_dtype()).element_size()
    check_memory(culprit, owner, sizes[culprit], total * itemsize)


def check_input(owner: str, x: Any, module: nn.Module, shape: tuple) -> torch.Tensor:
    """A finite input of the given shape, with the dtype and device of ``module``'s parameters."""
    weight = next(module.parameters())
    return check_tensor("x", owner, x, shape=shape, dtype=weight.dtype, device=weight.device)


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
        backend: scan backend, see :func:`gspn2.gspn_scan`.

    Shapes:
        x: (B, dim, H, W), in the dtype and on the device of the parameters.
        returns: (B, dim, H, W).

    NaN and inf inputs are refused (``ValueError``); the parameters must fit in memory.
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
        dim = check_int("dim", owner, dim, low=1)
        if proxy_dim is not None:
            proxy_dim = check_int("proxy_dim", owner, proxy_dim, low=1)
        d_state = check_int("d_state", owner, d_state, low=1)
        shared = check_bool("shared", owner, shared)
        groups = check_int("groups", owner, groups, low=1)
        chunk = check_chunk(owner, chunk)
        backend = check_choice("backend", owner, backend, ("auto", *BACKENDS))
        inner = 2 * dim
        prop = proxy_dim or inner
        n_groups = groups if shared else prop
        if prop % n_groups:
            raise param_error(
                "groups", owner, f"a divisor of the {prop} propagated channels", groups
            )
        sizes = {"dim": dim, "proxy_dim": proxy_dim, "d_state": d_state, "groups": groups}
        smallest = {"dim": 1, "d_state": 1} | ({"proxy_dim": 1} if proxy_dim else {})
        check_parameter_memory(owner, self.parameter_count, {**sizes, "shared": shared}, smallest)
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

    @staticmethod
    def parameter_count(
        dim: int,
        proxy_dim: int | None = 8,
        d_state: int = 16,
        shared: bool = True,
        groups: int = 1,
        **_: Any,
    ) -> int:
        """The number of parameters of a mixer built with these sizes, without building it."""
        inner = 2 * dim
        prop = proxy_dim or inner
        n_groups = groups if shared else prop
        proxies = 2 * inner * prop + prop + inner if proxy_dim else 0
        return (
            (dim + 1) * inner  # in_proj
            + 10 * inner  # depthwise 3x3 convolution
            + proxies  # proxy and out_proxy
            + (inner + 1) * d_state  # gate
            + (d_state + 1) * 12 * n_groups  # to_w
            + 3 * (d_state + 1) * 4 * prop  # to_lam, to_u, to_d
            + 4  # mix
            + 2 * inner  # norm
            + (inner + 1) * dim  # out_proj
        )

    def propagation_parameters(self) -> int:
        """Parameters of the gate heads that produce the propagation weights w."""
        return sum(p.numel() for p in self.to_w.parameters())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        owner = type(self).__name__
        x = check_input(owner, x, self, (None, self.dim, None, None))
        backend = resolve(owner, self.backend, x)
        z = self.in_proj(rearrange(x, "b c h w -> b h w c"))
        z = F.silu(self.dwconv(rearrange(z, "b h w c -> b c h w")))
        z = rearrange(z, "b c h w -> b h w c")
        p = rearrange(self.proxy(z), "b h w c -> b c h w")
        s = self.gate(z)
        raw = rearrange(self.to_w(s), "b h w (k n g) -> k n b g h w", k=4, n=3)
        weights = {
            direction: stable_weights(*raw[k], axis=-2 if direction in ("lr", "rl") else -1)
            for k, direction in enumerate(DIRECTIONS)
        }
        lam, u, d = (
            rearrange(head(s), "b h w (k c) -> k b c h w", k=4)
            for head in (self.to_lam, self.to_u, self.to_d)
        )
        y = four_directions(
            p, weights, list(torch.sigmoid(lam)), list(u), list(d), self.mix, self.chunk, backend
        )
        y = self.norm(self.out_proxy(rearrange(y, "b c h w -> b h w c")))
        return rearrange(self.out_proj(y), "b h w c -> b c h w")


class GSPN1Mixer(GSPN2Mixer):
    """The GSPN-1 baseline: per-channel propagation weights on all C_in = 2·dim channels, no
    proxy; otherwise the GSPN-2 block (same gate generator, merge and projections).

    Shapes:
        x: (B, dim, H, W), in the dtype and on the device of the parameters.
        returns: (B, dim, H, W).

    NaN and inf inputs are refused (``ValueError``).
    """

    def __init__(
        self,
        dim: int,
        d_state: int = 16,
        chunk: int | None = None,
        backend: Backend = "auto",
    ) -> None:
        super().__init__(dim, None, d_state, shared=False, chunk=chunk, backend=backend)

    @staticmethod
    def parameter_count(dim: int, d_state: int = 16, **_: Any) -> int:
        """The number of parameters of a GSPN-1 mixer with these sizes."""
        return GSPN2Mixer.parameter_count(dim, None, d_state, shared=False)


class SoftmaxMixer(nn.Module):
    r"""Multi-head softmax self-attention over the H·W tokens:
    :math:`\mathrm{softmax}(QK^\top/\sqrt{d_h})V` (torch's fused SDPA), the baseline GSPN replaces.

    Shapes:
        x: (B, dim, H, W), in the dtype and on the device of the parameters.
        returns: (B, dim, H, W).

    NaN and inf inputs are refused (``ValueError``).
    """

    def __init__(self, dim: int, heads: int = 4) -> None:
        super().__init__()
        owner = "SoftmaxMixer"
        dim = check_int("dim", owner, dim, low=1)
        heads = check_int("heads", owner, heads, low=1)
        if dim % heads:
            raise param_error("heads", owner, f"a divisor of dim={dim}", heads)
        check_parameter_memory(owner, self.parameter_count, {"dim": dim}, {"dim": 1})
        self.dim, self.heads = dim, heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    @staticmethod
    def parameter_count(dim: int, **_: Any) -> int:
        """The number of parameters of an attention mixer of width ``dim``."""
        return (dim + 1) * 3 * dim + (dim + 1) * dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = check_input("SoftmaxMixer", x, self, (None, self.dim, None, None))
        height, width = x.shape[-2:]
        tokens = rearrange(x, "b c h w -> b (h w) c")
        q, k, v = rearrange(self.qkv(tokens), "b n (t m e) -> t b m n e", t=3, m=self.heads)
        out = rearrange(F.scaled_dot_product_attention(q, k, v), "b m n e -> b n (m e)")
        return rearrange(self.proj(out), "b (h w) c -> b c h w", h=height, w=width)
