"""AMVim: pruning-robust Vision Mamba with asymmetric multi-scale scanning paths (NeurIPS 2025).

A Vim block scans the patch tokens along the raster order and its reverse; an AMVim block keeps
the raster path and scans the other path window by window (s × s windows, reversed), with the
window size varying over depth. Under training-free token pruning the window path keeps local
2-D neighbourhoods contiguous. The public names are imported on first use (importing ``amvim``
imports no torch).

>>> import torch
>>> from amvim import AMVim, TokenPruner
>>> model = AMVim(img_size=8, patch_size=2, dim=16, depth=3, window_sizes=[2], d_state=4)
>>> model(torch.randn(2, 1, 8, 8), pruner=TokenPruner(layers=[1], keep_ratio=0.5)).shape
torch.Size([2, 10])
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "AMVim": "models",
        "AMVimBlock": "blocks",
        "TinyViT": "models",
        "TokenPruner": "pruning",
        "Vim": "models",
        "VimBlock": "blocks",
        "digits16": "data",
        "inverse": "orders",
        "order_from_coords": "orders",
        "raster_order": "orders",
        "selective_scan": "ops",
        "shapes": "data",
        "window_order": "orders",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from amvim.blocks import AMVimBlock as AMVimBlock
    from amvim.blocks import VimBlock as VimBlock
    from amvim.data import digits16 as digits16
    from amvim.data import shapes as shapes
    from amvim.models import AMVim as AMVim
    from amvim.models import TinyViT as TinyViT
    from amvim.models import Vim as Vim
    from amvim.ops import selective_scan as selective_scan
    from amvim.orders import inverse as inverse
    from amvim.orders import order_from_coords as order_from_coords
    from amvim.orders import raster_order as raster_order
    from amvim.orders import window_order as window_order
    from amvim.pruning import TokenPruner as TokenPruner
