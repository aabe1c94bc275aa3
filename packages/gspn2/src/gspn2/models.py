"""A small hierarchical image classifier built from the mixers (a VMamba/ViT-style stage stack).

Patch embedding (a k×k convolution with stride k and a LayerNorm; plus a learned position
embedding for softmax attention), then per stage ``depths[i]`` pre-norm blocks
``x + mixer(LN(x))``, ``x + MLP(LN(x))`` at width ``dims[i]``, a 2×2 stride-2 convolution between
stages, and a LayerNorm + linear head on the flattened last map.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from einops import rearrange
from torch import nn

from gspn2.mixers import GSPN1Mixer, GSPN2Mixer, SoftmaxMixer
from paperkit import check_choice, param_error

__all__ = ["MIXERS", "Block", "GSPNClassifier", "make_mixer"]

MIXERS = ("gspn2", "gspn1", "softmax")


def make_mixer(name: str, dim: int, **kwargs: Any) -> nn.Module:
    """``"gspn2"`` -> :class:`GSPN2Mixer`, ``"gspn1"`` -> :class:`GSPN1Mixer`, ``"softmax"`` ->
    :class:`SoftmaxMixer`, with ``kwargs`` passed on."""
    check_choice("mixer", "make_mixer", name, MIXERS)
    cls = {"gspn2": GSPN2Mixer, "gspn1": GSPN1Mixer, "softmax": SoftmaxMixer}[name]
    return cls(dim, **kwargs)


class _ChannelLayerNorm(nn.LayerNorm):
    """LayerNorm over the channels of a (B, C, H, W) map."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rearrange(super().forward(rearrange(x, "b c h w -> b h w c")), "b h w c -> b c h w")


class Block(nn.Module):
    """``x + mixer(LN(x))``, then ``x + MLP(LN(x))`` (MLP: 1×1 conv, GELU, 1×1 conv)."""

    def __init__(self, dim: int, mixer: str, mlp_ratio: float = 2.0, **mixer_kwargs: Any) -> None:
        super().__init__()
        hidden = int(dim * mlp_ratio)
        self.norm1 = _ChannelLayerNorm(dim)
        self.mixer = make_mixer(mixer, dim, **mixer_kwargs)
        self.norm2 = _ChannelLayerNorm(dim)
        self.mlp = nn.Sequential(nn.Conv2d(dim, hidden, 1), nn.GELU(), nn.Conv2d(hidden, dim, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.mixer(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class GSPNClassifier(nn.Module):
    """Image classifier (B, in_chans, img_size, img_size) -> (B, num_classes) logits.

    Args:
        img_size: input side; must be divisible by ``patch_size · 2^(stages-1)``.
        in_chans, num_classes: input channels and classes.
        dims, depths: width and number of blocks per stage.
        mixer: ``"gspn2"``, ``"gspn1"`` or ``"softmax"``.
        patch_size: side of the patch embedding.
        mixer_kwargs: passed to every mixer (e.g. ``proxy_dim``, ``backend``, ``heads``).
    """

    def __init__(
        self,
        img_size: int = 16,
        in_chans: int = 1,
        num_classes: int = 10,
        dims: Sequence[int] = (32, 64),
        depths: Sequence[int] = (1, 1),
        mixer: str = "gspn2",
        patch_size: int = 2,
        mlp_ratio: float = 2.0,
        **mixer_kwargs: Any,
    ) -> None:
        super().__init__()
        owner = "GSPNClassifier"
        check_choice("mixer", owner, mixer, MIXERS)
        dims, depths = list(dims), list(depths)
        if not dims or len(dims) != len(depths):
            raise param_error("depths", owner, f"as long as dims ({len(dims)} stages)", depths)
        scale = patch_size * 2 ** (len(dims) - 1)
        if img_size % scale:
            raise param_error("img_size", owner, f"divisible by {scale}", img_size)
        self.img_size, self.in_chans = img_size, in_chans
        self.stem = nn.Sequential(
            nn.Conv2d(in_chans, dims[0], patch_size, stride=patch_size), _ChannelLayerNorm(dims[0])
        )
        layers: list[nn.Module] = []
        for i, (dim, depth) in enumerate(zip(dims, depths, strict=True)):
            if i:
                layers.append(nn.Conv2d(dims[i - 1], dim, 2, stride=2))
            layers += [Block(dim, mixer, mlp_ratio, **mixer_kwargs) for _ in range(depth)]
        self.stages = nn.Sequential(*layers)
        side = img_size // patch_size
        # softmax attention is permutation-equivariant: it gets the usual learned position
        # embedding (the scans and the depthwise convolution of GSPN carry position themselves)
        self.pos_embed = (
            nn.Parameter(0.02 * torch.randn(1, dims[0], side, side)) if mixer == "softmax" else None
        )
        self.norm = _ChannelLayerNorm(dims[-1])
        last = img_size // scale
        self.head = nn.Linear(dims[-1] * last * last, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        expected = (self.in_chans, self.img_size, self.img_size)
        if not isinstance(x, torch.Tensor) or x.dim() != 4 or tuple(x.shape[1:]) != expected:
            shown = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise param_error(
                "x", "GSPNClassifier", f"a (B, {', '.join(map(str, expected))}) tensor", shown
            )
        tokens = self.stem(x)
        if self.pos_embed is not None:
            tokens = tokens + self.pos_embed
        return self.head(self.norm(self.stages(tokens)).flatten(1))
