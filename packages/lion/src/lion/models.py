r"""Small pre-LN transformers on one backbone: LionViT and its baselines, and a token tagger.

Block: :math:`x\leftarrow x+\mathrm{Attn}(\mathrm{LN}(x))`, then
:math:`x\leftarrow x+\mathrm{MLP}(\mathrm{LN}(x))` (MLP ratio 4, GELU).
ViTs: non-overlapping patches, a learned positional embedding, an optional class token, a final
LayerNorm and a linear head on the mean of the tokens (``pool="mean"``, the default) or on the
class token (``pool="cls"``). LION-T/S/B follow DeiT: dim 192/384/768, depth
12, heads 3/6/12, patch 16.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch
from einops.layers.torch import Rearrange
from torch import nn

from lion.attention import DECAYS, ORDERS, LionAttention, module_input
from lion.baselines import CausalLinearAttention, SoftmaxAttention
from lion.ops import BACKENDS
from paperkit import Described, check_choice, check_int, check_tensor, describe, param_error

__all__ = [
    "Block",
    "CausalLinearViT",
    "Encoder",
    "LionViT",
    "SequenceTagger",
    "SoftmaxViT",
    "lion_b",
    "lion_s",
    "lion_t",
]

AttentionFactory = Callable[[], nn.Module]


class Block(nn.Module):
    """Pre-LN transformer block: attention and a GELU MLP, each with a residual."""

    def __init__(self, dim: int, attention: nn.Module, mlp_ratio: float = 4.0) -> None:
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), attention
        self.norm2 = nn.LayerNorm(dim)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Encoder(nn.Module):
    """``depth`` blocks with fresh attention layers from ``make_attention()``, then a LayerNorm."""

    def __init__(self, dim: int, depth: int, make_attention: AttentionFactory) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim, make_attention()) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


def _set_backend(model, backend):
    for module in model.modules():
        if isinstance(module, LionAttention):
            module.set_backend(backend)
    return model


def _init(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.trunc_normal_(module.weight, std=0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)


class _ViT(nn.Module):
    def __init__(
        self,
        img_size: int,
        patch_size: int,
        in_chans: int,
        num_classes: int,
        dim: int,
        depth: int,
        heads: int,
        pool: str,
        make_attention: Callable[[tuple[int, int]], nn.Module],
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        for name, value in (
            ("img_size", img_size),
            ("patch_size", patch_size),
            ("in_chans", in_chans),
            ("num_classes", num_classes),
            ("dim", dim),
            ("depth", depth),
            ("heads", heads),
        ):
            check_int(name, owner, value, low=1)
        if dim % heads:
            raise param_error("heads", owner, f"a divisor of dim = {dim}", heads)
        if img_size % patch_size:
            raise param_error(
                "patch_size", owner, f"a divisor of img_size = {img_size}", patch_size
            )
        self.pool = check_choice("pool", owner, pool, ("mean", "cls"))
        self.img_size, self.in_chans = img_size, in_chans
        side = img_size // patch_size
        self.grid = (side, side)
        self.patch_embed = nn.Sequential(
            Rearrange("b c (h p) (w q) -> b (h w) (p q c)", p=patch_size, q=patch_size),
            nn.Linear(patch_size * patch_size * in_chans, dim),
        )
        n_tokens = side * side + (pool == "cls")
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim)) if pool == "cls" else None
        self.pos_embed = nn.Parameter(torch.zeros(1, n_tokens, dim))
        self.encoder = Encoder(dim, depth, lambda: make_attention(self.grid))
        self.head = nn.Linear(dim, num_classes)
        self.apply(_init)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        if self.cls_token is not None:
            nn.init.trunc_normal_(self.cls_token, std=0.02)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """``(B, in_chans, img_size, img_size)`` images, of the model's dtype and device, to
        ``(B, num_classes)`` logits. NaN or inf in the images is refused."""
        shape = ("B", self.in_chans, self.img_size, self.img_size)
        module_input("images", type(self).__name__, images, self.head.weight, shape)
        x = self.patch_embed(images)
        if self.cls_token is not None:
            x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = self.encoder(x + self.pos_embed)
        return self.head(x[:, 0] if self.pool == "cls" else x.mean(1))


class LionViT(_ViT):
    """ViT with LION attention (``decay`` "lit"/"d"/"s", ``order`` "raster"/"snake").

    ``backend`` (the form, see :class:`~lion.LionAttention`) and ``chunk_size`` are passed to
    every LION layer; :meth:`set_backend` switches all layers at once on the same weights.

    Shapes:
        images: ``(B, in_chans, img_size, img_size)``, of the model's dtype and device.
        returns: ``(B, num_classes)`` logits.

    NaN or inf in the images is refused (``ValueError``).
    """

    def __init__(
        self,
        img_size: int = 224,
        patch_size: int = 16,
        in_chans: int = 3,
        num_classes: int = 1000,
        dim: int = 192,
        depth: int = 12,
        heads: int = 3,
        decay: Literal["lit", "d", "s"] = "s",
        order: Literal["raster", "snake"] = "raster",
        pool: Literal["mean", "cls"] = "mean",
        *,
        backend: Literal["auto", "reference", "chunk", "rnn", "triton"] = "reference",
        chunk_size: int = 64,
    ) -> None:
        check_choice("decay", "LionViT", decay, DECAYS)
        check_choice("order", "LionViT", order, ORDERS)
        check_choice("backend", "LionViT", backend, ("auto", *BACKENDS))

        def make(grid):
            return LionAttention(
                dim,
                heads,
                decay=decay,
                backend=backend,
                chunk_size=chunk_size,
                order=order,
                grid=grid,
            )

        super().__init__(img_size, patch_size, in_chans, num_classes, dim, depth, heads, pool, make)

    def set_backend(
        self, backend: Literal["auto", "reference", "chunk", "rnn", "triton"]
    ) -> LionViT:
        """Switch every LION layer to ``backend``; returns ``self``."""
        return _set_backend(self, backend)


class SoftmaxViT(_ViT):
    """The same ViT with softmax attention (the DeiT baseline).

    Shapes:
        images: ``(B, in_chans, img_size, img_size)``, of the model's dtype and device.
        returns: ``(B, num_classes)`` logits.

    NaN or inf in the images is refused (``ValueError``).
    """

    def __init__(
        self,
        img_size: int = 224,
        patch_size: int = 16,
        in_chans: int = 3,
        num_classes: int = 1000,
        dim: int = 192,
        depth: int = 12,
        heads: int = 3,
        pool: Literal["mean", "cls"] = "mean",
    ) -> None:
        super().__init__(
            img_size,
            patch_size,
            in_chans,
            num_classes,
            dim,
            depth,
            heads,
            pool,
            lambda grid: SoftmaxAttention(dim, heads),
        )


class CausalLinearViT(_ViT):
    """The same ViT with causal decayed linear attention (forward mask only).

    Shapes:
        images: ``(B, in_chans, img_size, img_size)``, of the model's dtype and device.
        returns: ``(B, num_classes)`` logits.

    NaN or inf in the images is refused (``ValueError``).
    """

    def __init__(
        self,
        img_size: int = 224,
        patch_size: int = 16,
        in_chans: int = 3,
        num_classes: int = 1000,
        dim: int = 192,
        depth: int = 12,
        heads: int = 3,
        decay: Literal["lit", "d", "s"] = "s",
        pool: Literal["mean", "cls"] = "mean",
    ) -> None:
        check_choice("decay", "CausalLinearViT", decay, DECAYS)
        super().__init__(
            img_size,
            patch_size,
            in_chans,
            num_classes,
            dim,
            depth,
            heads,
            pool,
            lambda grid: CausalLinearAttention(dim, heads, decay=decay),
        )


def lion_t(**kwargs) -> LionViT:
    """LION-T: dim 192, depth 12, 3 heads, patch 16 (DeiT-T sizes)."""
    return LionViT(dim=192, depth=12, heads=3, **kwargs)


def lion_s(**kwargs) -> LionViT:
    """LION-S: dim 384, depth 12, 6 heads, patch 16 (DeiT-S sizes)."""
    return LionViT(dim=384, depth=12, heads=6, **kwargs)


def lion_b(**kwargs) -> LionViT:
    """LION-B: dim 768, depth 12, 12 heads, patch 16 (DeiT-B sizes)."""
    return LionViT(dim=768, depth=12, heads=12, **kwargs)


ATTENTIONS = ("lion", "softmax", "causal")


class SequenceTagger(nn.Module):
    """Token embedding + learned positions + :class:`Encoder` + a per-token linear head, for
    token-level tasks such as :func:`lion.data.bidirectional_copy`.

    ``attention``: ``"lion"`` (with ``decay``), ``"softmax"`` or ``"causal"`` (with ``decay``).

    Shapes:
        tokens: ``(B, N)`` integer ids in ``[0, vocab)``, ``N <= max_len``.
        returns: ``(B, N, num_classes)`` logits.

    Ids outside ``[0, vocab)`` are refused (``ValueError``) instead of indexing out of the
    embedding table.
    """

    def __init__(
        self,
        vocab: int,
        num_classes: int,
        max_len: int,
        dim: int = 64,
        depth: int = 2,
        heads: int = 4,
        attention: Literal["lion", "softmax", "causal"] = "lion",
        decay: Literal["lit", "d", "s"] = "s",
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        for name, value in (
            ("vocab", vocab),
            ("num_classes", num_classes),
            ("max_len", max_len),
            ("dim", dim),
            ("depth", depth),
            ("heads", heads),
        ):
            check_int(name, owner, value, low=1)
        self.attention = check_choice("attention", owner, attention, ATTENTIONS)
        check_choice("decay", owner, decay, DECAYS)
        if dim % heads:
            raise param_error("heads", owner, f"a divisor of dim = {dim}", heads)
        if attention == "lion":

            def make():
                return LionAttention(dim, heads, decay=decay)
        elif attention == "softmax":

            def make():
                return SoftmaxAttention(dim, heads)
        else:

            def make():
                return CausalLinearAttention(dim, heads, decay=decay)

        self.max_len, self.vocab = max_len, vocab
        self.embed = nn.Embedding(vocab, dim)
        self.pos_embed = nn.Parameter(torch.zeros(1, max_len, dim))
        self.encoder = Encoder(dim, depth, make)
        self.head = nn.Linear(dim, num_classes)
        self.apply(_init)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``(B, N)`` token ids in ``[0, vocab)``, ``N <= max_len``, to ``(B, N, num_classes)``
        logits."""
        owner = type(self).__name__
        device = self.embed.weight.device
        check_tensor("tokens", owner, tokens, shape=("B", "N"), dtype="int", device=device)
        if tokens.shape[1] > self.max_len:
            expected = f"of shape (B, N) with N <= max_len = {self.max_len}"
            raise param_error("tokens", owner, expected, describe(tokens))
        if bool(((tokens < 0) | (tokens >= self.vocab)).any()):
            low, high = int(tokens.min()), int(tokens.max())
            expected = f"token ids in [0, {self.vocab}) (vocab = {self.vocab})"
            raise param_error("tokens", owner, expected, Described(f"ids in [{low}, {high}]"))
        x = self.embed(tokens) + self.pos_embed[:, : tokens.shape[1]]
        return self.head(self.encoder(x))

    def set_backend(
        self, backend: Literal["auto", "reference", "chunk", "rnn", "triton"]
    ) -> SequenceTagger:
        """Switch every LION layer to ``backend``; returns ``self``."""
        return _set_backend(self, backend)
