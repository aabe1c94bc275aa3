r"""Image classifiers at equal width and depth: :class:`Vim`, :class:`AMVim` and :class:`TinyViT`.

Each model splits a (B, C, H, W) image into an h × w grid of p × p patches (h = H/p), embeds them
(a p-strided conv) and adds a learned position embedding; its ``depth`` blocks then run on the
tokens in raster order with their grid coordinates; a final LayerNorm, mean pooling over the
tokens (or Vim's middle class token, ``cls="middle"``) and a linear head give the logits.

* :class:`Vim`: :class:`amvim.blocks.VimBlock` (raster + reversed raster paths).
* :class:`AMVim`: :class:`amvim.blocks.AMVimBlock` with a window size per layer (multi-scale:
  the sizes cycle with depth; defaults {2, 4} on an 8 × 8 grid and {2, 7, 14} on 14 × 14).
* :class:`TinyViT`: pre-norm ``torch.nn.TransformerEncoderLayer`` blocks (the ViT baseline).

``model(x, pruner=TokenPruner(...))`` applies training-free token reduction between blocks;
``model.flops(pruner)`` counts the forward's floating-point operations per image.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from amvim.blocks import AMVimBlock, VimBlock
from amvim.ops import BACKENDS
from amvim.orders import grid_coords
from amvim.pruning import TokenPruner
from paperkit import check_choice, check_int, check_tensor, param_error

__all__ = ["AMVim", "TinyViT", "Vim", "default_window_sizes"]


def default_window_sizes(grid: int) -> tuple[int, ...]:
    """The window sizes AMVim cycles through on a grid of side ``grid``: (2, 7, 14) for 14 and
    otherwise the proper divisors >= 2 ((2, 4) for 8, (2, 4, 8) for 16), else (min(2, grid),).

    >>> default_window_sizes(8), default_window_sizes(14), default_window_sizes(16)
    ((2, 4), (2, 7, 14), (2, 4, 8))
    """
    grid = check_int("grid", "default_window_sizes", grid, low=1, high=2**15)
    if grid == 14:
        return (2, 7, 14)
    return tuple(s for s in range(2, grid) if grid % s == 0) or (min(2, grid),)


class _Backbone(nn.Module):
    """Patch embedding, position embedding, blocks with optional pruning, norm, pool, head."""

    owner = "model"

    def __init__(self, img_size, patch_size, in_chans, num_classes, dim, depth, cls) -> None:
        super().__init__()
        owner = self.owner
        self.img_size = check_int("img_size", owner, img_size, low=1, high=2**15)
        self.patch_size = check_int("patch_size", owner, patch_size, low=1, high=self.img_size)
        if self.img_size % self.patch_size:
            raise param_error("patch_size", owner, f"a divisor of img_size={img_size}", patch_size)
        self.in_chans = check_int("in_chans", owner, in_chans, low=1, high=4096)
        self.num_classes = check_int("num_classes", owner, num_classes, low=1, high=10**6)
        self.dim = check_int("dim", owner, dim, low=1, high=2**16)
        self.depth = check_int("depth", owner, depth, low=1, high=1000)
        self.cls = check_choice("cls", owner, cls, ("mean", "middle"))
        self.grid = self.img_size // self.patch_size
        self.num_tokens = self.grid * self.grid
        self.patch_embed = nn.Conv2d(in_chans, dim, patch_size, stride=patch_size)
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, self.num_tokens, dim))
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, dim)) if cls == "middle" else None
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)
        self.register_buffer("coords", grid_coords(self.grid, self.grid), persistent=False)

    def _block(self, i: int, x: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _block_flops(self, L: int) -> int:
        raise NotImplementedError

    def forward(self, x: torch.Tensor, pruner: TokenPruner | None = None) -> torch.Tensor:
        """Logits (B, num_classes) of images x (B, in_chans, img_size, img_size), with
        training-free token reduction by ``pruner`` (None: none).

        NaN policy: NaN or inf in x is refused (ValueError)."""
        owner = self.owner
        size = self.img_size
        check_tensor(
            "x",
            owner,
            x,
            shape=("B", self.in_chans, size, size),
            dtype=self.patch_embed.weight.dtype,
        )
        if pruner is not None and not isinstance(pruner, TokenPruner):
            raise param_error(
                "pruner", owner, "a TokenPruner or None", type(pruner).__name__, cls=TypeError
            )
        tokens = self.patch_embed(x).flatten(2).transpose(1, 2) + self.pos_embed
        if self.cls_token is not None:
            tokens = torch.cat([tokens, self.cls_token.expand(x.shape[0], -1, -1)], dim=1)
        coords = self.coords
        middle = self.cls_token is not None
        for i in range(self.depth):
            tokens = self._block(i, tokens, coords)
            if pruner is not None and i + 1 in pruner.layers:
                tokens, coords = pruner.prune(tokens, coords, middle, layer=i + 1)
        tokens = self.norm(tokens)
        pooled = tokens[:, -1] if middle else tokens.mean(dim=1)
        return self.head(pooled)

    def flops(self, pruner: TokenPruner | None = None) -> int:
        """Floating-point operations of one image's forward (2 per multiply-add): the patch
        embedding, every block at the token count it sees under ``pruner``, and the head
        (norms, activations and pooling not counted)."""
        if pruner is not None and not isinstance(pruner, TokenPruner):
            raise param_error(
                "pruner", "flops", "a TokenPruner or None", type(pruner).__name__, cls=TypeError
            )
        lengths = (
            pruner.lengths(self.num_tokens, self.depth)
            if pruner is not None
            else [self.num_tokens] * self.depth
        )
        extra = int(self.cls_token is not None)
        embed = 2 * self.in_chans * self.patch_size**2 * self.dim * self.num_tokens
        blocks = sum(self._block_flops(L + extra) for L in lengths)
        return embed + blocks + 2 * self.dim * self.num_classes


class _MambaModel(_Backbone):
    def _block(self, i: int, x: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        return self.blocks[i]._forward(x, coords, self.cls_token is not None)

    def _block_flops(self, L: int) -> int:
        r"""Per token: in_proj 2·D·2E, out_proj 2·E·D, and per path the conv 2·E·k, x_proj
        2·E·(R + 2N), dt_proj 2·R·E and the scan 9·E·N (Mamba's count); linear in L."""
        b = self.blocks[0]
        D, E, N, R, k = self.dim, b.d_inner, b.d_state, b.dt_rank, b.d_conv
        path = 2 * E * k + 2 * E * (R + 2 * N) + 2 * R * E + 9 * E * N
        return L * (4 * D * E + 2 * E * D + 2 * path)


class Vim(_MambaModel):
    r"""Vision Mamba (Vim, Zhu et al. 2024): bidirectional :class:`amvim.blocks.VimBlock`\ s.

    Args:
        img_size, patch_size, in_chans, num_classes: image side, patch side (a divisor),
            channels, classes. dim, depth: width D and number of blocks. d_state: N.
            expand: E = expand·D. cls: ``"mean"`` pooling or Vim's ``"middle"`` class token.
            backend: the scan backend (:func:`amvim.ops.selective_scan`).

    Shapes: forward(x (B, in_chans, img_size, img_size), pruner=None) -> (B, num_classes).
    NaN policy: NaN or inf in x is refused.

    >>> import torch
    >>> Vim(img_size=8, patch_size=2, dim=16, depth=2, d_state=4)(torch.randn(3, 1, 8, 8)).shape
    torch.Size([3, 10])
    """

    owner = "Vim"

    def __init__(
        self,
        img_size: int = 16,
        patch_size: int = 2,
        in_chans: int = 1,
        num_classes: int = 10,
        dim: int = 64,
        depth: int = 6,
        d_state: int = 16,
        expand: int = 2,
        cls: str = "mean",
        backend: str = "auto",
    ) -> None:
        super().__init__(img_size, patch_size, in_chans, num_classes, dim, depth, cls)
        check_choice("backend", self.owner, backend, BACKENDS)
        self.blocks = nn.ModuleList(
            VimBlock(dim, d_state=d_state, expand=expand, backend=backend) for _ in range(depth)
        )


class AMVim(_MambaModel):
    r"""AMVim (AMVim abstract): :class:`amvim.blocks.AMVimBlock`\ s, a sequential raster path
    and a reversed window-major path per block, the window size cycling through
    ``window_sizes`` with depth (multi-scale). Same parameters and FLOPs as :class:`Vim`.

    Args:
        window_sizes: per-layer window sizes, cycled (None: :func:`default_window_sizes` of
            the grid); each in [1, grid side].
        window_reverse: read the window path backwards. Others as in :class:`Vim`.

    Shapes: forward(x (B, in_chans, img_size, img_size), pruner=None) -> (B, num_classes).
    NaN policy: NaN or inf in x is refused.

    >>> import torch
    >>> model = AMVim(img_size=8, patch_size=2, dim=16, depth=2, window_sizes=[2], d_state=4)
    >>> model(torch.randn(3, 1, 8, 8)).shape
    torch.Size([3, 10])
    """

    owner = "AMVim"

    def __init__(
        self,
        img_size: int = 16,
        patch_size: int = 2,
        in_chans: int = 1,
        num_classes: int = 10,
        dim: int = 64,
        depth: int = 6,
        window_sizes: Sequence[int] | None = None,
        cls: str = "mean",
        d_state: int = 16,
        expand: int = 2,
        window_reverse: bool = True,
        backend: str = "auto",
    ) -> None:
        super().__init__(img_size, patch_size, in_chans, num_classes, dim, depth, cls)
        check_choice("backend", self.owner, backend, BACKENDS)
        if window_sizes is None:
            window_sizes = default_window_sizes(self.grid)
        if isinstance(window_sizes, (str, bytes)) or not isinstance(window_sizes, Sequence):
            raise param_error(
                "window_sizes",
                self.owner,
                "a sequence of integers",
                type(window_sizes).__name__,
                cls=TypeError,
            )
        if not window_sizes:
            raise param_error("window_sizes", self.owner, "non-empty", window_sizes)
        sizes = [
            check_int("window_sizes", self.owner, s, low=1, high=self.grid) for s in window_sizes
        ]
        self.window_sizes = [sizes[i % len(sizes)] for i in range(depth)]
        self.blocks = nn.ModuleList(
            AMVimBlock(dim, s, window_reverse, d_state=d_state, expand=expand, backend=backend)
            for s in self.window_sizes
        )


class TinyViT(_Backbone):
    r"""The ViT baseline at the same width and depth: pre-norm
    ``torch.nn.TransformerEncoderLayer`` blocks (multi-head self-attention, GELU MLP).

    Args:
        num_heads: attention heads (a divisor of dim). mlp_ratio: MLP width / dim. Others as
            in :class:`Vim`; with ``cls="middle"`` a class token (attention has no order).

    Shapes: forward(x (B, in_chans, img_size, img_size), pruner=None) -> (B, num_classes).
    NaN policy: NaN or inf in x is refused.

    >>> import torch
    >>> TinyViT(img_size=8, patch_size=2, dim=16, depth=2)(torch.randn(3, 1, 8, 8)).shape
    torch.Size([3, 10])
    """

    owner = "TinyViT"

    def __init__(
        self,
        img_size: int = 16,
        patch_size: int = 2,
        in_chans: int = 1,
        num_classes: int = 10,
        dim: int = 64,
        depth: int = 6,
        num_heads: int = 4,
        mlp_ratio: int = 4,
        cls: str = "mean",
    ) -> None:
        super().__init__(img_size, patch_size, in_chans, num_classes, dim, depth, cls)
        self.num_heads = check_int("num_heads", self.owner, num_heads, low=1, high=dim)
        if dim % self.num_heads:
            raise param_error("num_heads", self.owner, f"a divisor of dim={dim}", num_heads)
        self.mlp_ratio = check_int("mlp_ratio", self.owner, mlp_ratio, low=1, high=64)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(
                dim,
                num_heads,
                mlp_ratio * dim,
                dropout=0.0,
                activation="gelu",
                batch_first=True,
                norm_first=True,
            )
            for _ in range(depth)
        )

    def _block(self, i: int, x: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        return self.blocks[i](x)

    def _block_flops(self, L: int) -> int:
        """qkv and output projections 2·4·D²·L, scores and weighted sum 2·2·L²·D, MLP
        2·2·r·D²·L."""
        D = self.dim
        return 8 * D * D * L + 4 * L * L * D + 4 * self.mlp_ratio * D * D * L
