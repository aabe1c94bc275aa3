r"""The backbone: the AFNO Fourier layer and a small DPOT-like operator network (paper, Sec. 3).

:class:`AFNO2d` is DPOT's Fourier mixing on 2-D, channel-last grids (:func:`spectral_mix`).
:class:`OperatorNet` maps the last ``in_frames`` states (plus two coordinate channels) to the
next state: ``patch x patch`` patch embedding (a Linear on each patch, as DPOT's strided
convolution), ``depth`` blocks

.. math:: h \mapsto h + \mathrm{MLP}(\mathrm{LN}_2(\mathrm{AFNO}(\mathrm{LN}_1(h)))),

(DPOT's block without the double skip), and a Linear un-patchify head whose output is added to the
last input frame.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from fadapter.bands import MODE_SETS, kept_modes
from fadapter.fourier import spectral_mix
from paperkit import check_choice, check_int, check_real, check_tensor, describe, param_error

__all__ = ["AFNO2d", "Block", "OperatorNet", "check_dtype", "check_grid"]

#: Upper bound on widths and similar sizes (parameters are allocated from them).
MAX_WIDTH = 2**14


def check_dtype(owner: str, x: torch.Tensor, dtype: torch.dtype) -> None:
    """Outside ``torch.autocast``, ``x`` must have the parameters' dtype (no silent cast)."""
    if x.dtype != dtype and not torch.is_autocast_enabled(x.device.type):
        raise param_error(
            "x", owner, f"a tensor of the layer's dtype {dtype}", describe(x), cls=TypeError
        )


def check_grid(
    owner: str, x: torch.Tensor, width: int, modes: int, mode_set: str, dtype: torch.dtype
) -> None:
    """``x`` is a finite channel-last (B, H, W, width) tensor of the parameters' dtype (any
    floating dtype under autocast) whose grid holds the kept modes."""
    check_tensor("x", owner, x, shape=(None, None, None, width))
    check_dtype(owner, x, dtype)
    H, W = x.shape[1], x.shape[2]
    need_h = 2 * modes - 1 if mode_set == "symmetric" else modes
    if need_h > H or modes > W // 2 + 1:
        raise param_error(
            "x",
            owner,
            f"a grid with H >= {need_h} and W // 2 + 1 >= {modes} (modes={modes}, {mode_set})",
            f"H={H}, W={W}",
        )


class AFNO2d(nn.Module):
    r"""DPOT's AFNO Fourier layer on a channel-last grid, with block-diagonal complex MLP weights.

    ``y = irfft2(GELU(X_K W1 + b1) W2 + b2) + x`` on the kept modes ``K`` (``modes`` per axis,
    ``mode_set="symmetric"``: :math:`|k_x| < K`, ``"corner"``: :math:`0 \le k_x < K` as the
    official code), every other mode zeroed. Weights are initialised as DPOT's,
    ``U(0, 1) / (c^2 h)`` with block size ``c = width / num_blocks`` and ``h = hidden_factor``.

    Shapes: x (B, H, W, width) → (B, H, W, width), with ``H >= 2·modes - 1`` (``modes`` for
    ``corner``) and ``W // 2 + 1 >= modes``. NaN policy: NaN or inf in x is refused.

    >>> layer = AFNO2d(16, num_blocks=4, modes=3)
    >>> layer(torch.randn(2, 8, 8, 16)).shape
    torch.Size([2, 8, 8, 16])
    """

    def __init__(
        self,
        width: int,
        num_blocks: int = 4,
        modes: int = 12,
        hidden_factor: int = 1,
        mode_set: str = "symmetric",
    ) -> None:
        super().__init__()
        owner = "AFNO2d"
        width = check_int("width", owner, width, low=1, high=MAX_WIDTH)
        num_blocks = check_int("num_blocks", owner, num_blocks, low=1, high=width)
        if width % num_blocks:
            raise param_error("num_blocks", owner, f"a divisor of width={width}", num_blocks)
        self.modes = check_int("modes", owner, modes, low=1, high=1024)
        self.hidden_factor = check_int("hidden_factor", owner, hidden_factor, low=1, high=64)
        self.mode_set = check_choice("mode_set", owner, mode_set, MODE_SETS)
        self.width, self.num_blocks = width, num_blocks
        c, h = width // num_blocks, self.hidden_factor
        self.block_size = c
        scale = 1.0 / (c * c * h)
        self.w1 = nn.Parameter(scale * torch.rand(2, num_blocks, c, c * h))
        self.b1 = nn.Parameter(scale * torch.rand(2, num_blocks, c * h))
        self.w2 = nn.Parameter(scale * torch.rand(2, num_blocks, c * h, c))
        self.b2 = nn.Parameter(scale * torch.rand(2, num_blocks, c))

    def weights(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(w1, b1, w2, b2)`` as the forward uses them."""
        return self.w1, self.b1, self.w2, self.b2

    def modes_on(self, height: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows and columns of the kept modes on a grid of ``height`` rows."""
        rows, cols, _ = kept_modes(height, self.modes, self.mode_set)
        return rows.to(device), cols.to(device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_grid(type(self).__name__, x, self.width, self.modes, self.mode_set, self.w1.dtype)
        rows, cols = self.modes_on(x.shape[1], x.device)
        return spectral_mix(x, *self.weights(), rows, cols)

    def extra_repr(self) -> str:
        return (
            f"width={self.width}, num_blocks={self.num_blocks}, modes={self.modes}, "
            f"hidden_factor={self.hidden_factor}, mode_set={self.mode_set!r}"
        )


class Block(nn.Module):
    """One operator block: ``h + MLP(LN(AFNO(LN(h))))`` on channel-last (B, H, W, width).

    NaN policy: NaN or inf in the input is refused by the Fourier layer.
    """

    def __init__(
        self,
        width: int,
        num_blocks: int = 4,
        modes: int = 12,
        mlp_ratio: float = 2.0,
        hidden_factor: int = 1,
        mode_set: str = "symmetric",
    ) -> None:
        super().__init__()
        mlp_ratio = check_real("mlp_ratio", "Block", mlp_ratio, low=0, low_open=True, high=64)
        self.norm1 = nn.LayerNorm(width)
        self.filter = AFNO2d(width, num_blocks, modes, hidden_factor, mode_set)
        self.norm2 = nn.LayerNorm(width)
        hidden = max(1, math.floor(width * mlp_ratio))
        self.mlp = nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm2(self.filter(self.norm1(x))))


class OperatorNet(nn.Module):
    r"""A small DPOT-like neural operator: next state from the last ``in_frames`` states.

    Input (B, H, W, in_frames·channels), frames stacked oldest first on the last axis; two
    coordinate channels :math:`(i/H, j/W)` are appended; ``patch x patch`` patches are embedded
    by a Linear into ``width`` channels; ``depth`` :class:`Block`\ s; a Linear head un-patchifies
    to ``channels`` per grid point and the result is added to the last input frame.
    Output (B, H, W, channels). H and W must be multiples of ``patch``, and the token grid
    ``(H/patch, W/patch)`` must hold the kept modes. NaN policy: NaN or inf in x is refused.

    >>> net = OperatorNet(in_frames=2, width=16, depth=1, num_blocks=4, modes=3)
    >>> net(torch.randn(3, 16, 16, 2)).shape
    torch.Size([3, 16, 16, 1])
    """

    def __init__(
        self,
        in_frames: int = 4,
        channels: int = 1,
        width: int = 64,
        depth: int = 4,
        num_blocks: int = 8,
        modes: int = 8,
        mlp_ratio: float = 2.0,
        patch: int = 2,
        hidden_factor: int = 1,
        mode_set: str = "symmetric",
    ) -> None:
        super().__init__()
        owner = "OperatorNet"
        self.in_frames = check_int("in_frames", owner, in_frames, low=1, high=1024)
        self.channels = check_int("channels", owner, channels, low=1, high=1024)
        width = check_int("width", owner, width, low=1, high=MAX_WIDTH)
        depth = check_int("depth", owner, depth, low=1, high=256)
        self.patch = check_int("patch", owner, patch, low=1, high=64)
        self.embed = nn.Linear((self.in_frames * self.channels + 2) * self.patch**2, width)
        self.blocks = nn.ModuleList(
            Block(width, num_blocks, modes, mlp_ratio, hidden_factor, mode_set)
            for _ in range(depth)
        )
        self.head = nn.Linear(width, self.channels * self.patch**2)
        self.width = width

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        owner = "OperatorNet"
        check_tensor("x", owner, x, shape=(None, None, None, self.in_frames * self.channels))
        check_dtype(owner, x, self.embed.weight.dtype)
        B, H, W, _ = x.shape
        p = self.patch
        if H % p or W % p:
            raise param_error("x", owner, f"a grid whose sides are multiples of patch={p}", x.shape)
        gx = torch.arange(H, dtype=x.dtype, device=x.device) / H
        gy = torch.arange(W, dtype=x.dtype, device=x.device) / W
        grid = torch.stack(torch.meshgrid(gx, gy, indexing="ij"), dim=-1).expand(B, H, W, 2)
        h = torch.cat([x, grid], dim=-1)
        h = h.reshape(B, H // p, p, W // p, p, -1).permute(0, 1, 3, 2, 4, 5)
        h = self.embed(h.reshape(B, H // p, W // p, -1))
        for block in self.blocks:
            h = block(h)
        out = self.head(h).reshape(B, H // p, W // p, p, p, self.channels)
        out = out.permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, self.channels)
        return x[..., -self.channels :] + out.to(x.dtype)
