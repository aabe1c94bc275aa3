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

from gspn2.mixers import GSPN1Mixer, GSPN2Mixer, SoftmaxMixer, check_input, check_parameter_memory
from paperkit import Described, check_bool, check_choice, check_int, check_real, param_error

__all__ = ["MIXERS", "Block", "GSPNClassifier", "make_mixer"]

MIXERS = ("gspn2", "gspn1", "softmax")


def make_mixer(name: str, dim: int, **kwargs: Any) -> nn.Module:
    """``"gspn2"`` -> :class:`GSPN2Mixer`, ``"gspn1"`` -> :class:`GSPN1Mixer`, ``"softmax"`` ->
    :class:`SoftmaxMixer`, with ``kwargs`` passed on."""
    check_choice("mixer", "make_mixer", name, MIXERS)
    return _MIXER_CLASSES[name](dim, **kwargs)


_MIXER_CLASSES = {"gspn2": GSPN2Mixer, "gspn1": GSPN1Mixer, "softmax": SoftmaxMixer}


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


def _sizes(owner: str, name: str, value: Any, low: int) -> list[int]:
    """A non-empty list of integers >= ``low`` (one per stage)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise param_error(
            name, owner, "a list of integers", Described(type(value).__name__), cls=TypeError
        )
    if not value:
        raise param_error(name, owner, "a non-empty list (one entry per stage)", list(value))
    return [check_int(name, owner, v, low=low) for v in value]


def _check_mixer_kwargs(owner: str, kwargs: dict[str, Any]) -> None:
    """The sizes the mixers take, checked before they size the parameter count."""
    for name in ("d_state", "groups", "heads"):
        if name in kwargs:
            check_int(name, owner, kwargs[name], low=1)
    if kwargs.get("proxy_dim") is not None:
        check_int("proxy_dim", owner, kwargs["proxy_dim"], low=1)
    if "shared" in kwargs:
        check_bool("shared", owner, kwargs["shared"])


class GSPNClassifier(nn.Module):
    """Image classifier (B, in_chans, img_size, img_size) -> (B, num_classes) logits.

    Args:
        img_size: input side; must be divisible by ``patch_size · 2^(stages-1)``.
        in_chans, num_classes: input channels and classes.
        dims, depths: width and number of blocks per stage.
        mixer: ``"gspn2"``, ``"gspn1"`` or ``"softmax"``.
        patch_size: side of the patch embedding.
        mlp_ratio: hidden width of the MLP over the stage width (> 0).
        mixer_kwargs: passed to every mixer (e.g. ``proxy_dim``, ``backend``, ``heads``).

    Shapes:
        x: (B, in_chans, img_size, img_size), in the dtype and on the device of the parameters.
        returns: (B, num_classes) logits.

    NaN and inf inputs are refused (``ValueError``); the parameters must fit in memory.
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
        img_size = check_int("img_size", owner, img_size, low=1)
        in_chans = check_int("in_chans", owner, in_chans, low=1)
        num_classes = check_int("num_classes", owner, num_classes, low=1)
        dims = _sizes(owner, "dims", dims, 1)
        depths = _sizes(owner, "depths", depths, 1)
        if len(depths) != len(dims):
            raise param_error("depths", owner, f"as long as dims ({len(dims)} stages)", depths)
        check_choice("mixer", owner, mixer, MIXERS)
        patch_size = check_int("patch_size", owner, patch_size, low=1)
        mlp_ratio = check_real("mlp_ratio", owner, mlp_ratio, low=1 / min(dims))
        _check_mixer_kwargs(owner, mixer_kwargs)
        scale = patch_size * 2 ** (len(dims) - 1)
        if img_size % scale:
            expected = f"divisible by 'patch_size' · 2^(stages - 1) = {scale}"
            raise param_error("img_size", owner, expected, img_size)
        sizes = {
            "img_size": img_size,
            "in_chans": in_chans,
            "num_classes": num_classes,
            "dims": dims,
            "depths": depths,
            "mlp_ratio": mlp_ratio,
        }
        smallest = {
            "img_size": scale,
            "in_chans": 1,
            "num_classes": 1,
            "dims": [1] * len(dims),
            "depths": [1] * len(dims),
            "mlp_ratio": 1.0,
        }

        def count(**s: Any) -> int:
            return self.parameter_count(**s, mixer=mixer, patch_size=patch_size, **mixer_kwargs)

        check_parameter_memory(owner, count, sizes, smallest)
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

    @staticmethod
    def parameter_count(
        img_size: int,
        in_chans: int,
        num_classes: int,
        dims: Sequence[int],
        depths: Sequence[int],
        mixer: str,
        patch_size: int,
        mlp_ratio: float,
        **mixer_kwargs: Any,
    ) -> int:
        """The number of parameters of a classifier with these sizes, without building it."""
        side = img_size // patch_size
        last = img_size // (patch_size * 2 ** (len(dims) - 1))
        total = (in_chans * patch_size**2 + 1) * dims[0] + 2 * dims[0]  # stem
        for i, (dim, depth) in enumerate(zip(dims, depths, strict=True)):
            if i:
                total += (4 * dims[i - 1] + 1) * dim  # 2x2 stride-2 convolution
            hidden = int(dim * mlp_ratio)
            block = 4 * dim + (dim + 1) * hidden + (hidden + 1) * dim  # 2 norms and the MLP
            block += _MIXER_CLASSES[mixer].parameter_count(dim, **mixer_kwargs)
            total += depth * block
        total += dims[0] * side * side if mixer == "softmax" else 0  # position embedding
        return total + 2 * dims[-1] + (dims[-1] * last * last + 1) * num_classes  # norm, head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = check_input(
            "GSPNClassifier", x, self, (None, self.in_chans, self.img_size, self.img_size)
        )
        tokens = self.stem(x)
        if self.pos_embed is not None:
            tokens = tokens + self.pos_embed
        return self.head(self.norm(self.stages(tokens)).flatten(1))
