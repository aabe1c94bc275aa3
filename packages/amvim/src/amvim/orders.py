r"""Scan orders over a grid of tokens: raster, window-major (AMVim's window-aware path), orders
rebuilt from the coordinates of the tokens that survive pruning, and inverse permutations.

A token at row r, column c of an h × w grid has raster index :math:`r w + c`. A scan order is a
permutation ``perm`` of the L tokens: the scan visits ``x[perm[0]], x[perm[1]], ...``.

* raster (Vim, and AMVim's sequential path S): sort by :math:`(r, c)`.
* window (AMVim's window-aware path W, abstract): split the grid into s × s windows (the last ones
  partial when s does not divide h or w), visit the windows in raster order and the tokens in
  raster order inside each window: sort by :math:`(\lfloor r/s\rfloor, \lfloor c/s\rfloor,
  r \bmod s, c \bmod s)`. With ``reverse`` the whole sequence is read backwards (the path keeps
  Vim's bidirectionality).

Pruned sequences keep each survivor's original (r, c); :func:`order_from_coords` sorts the
survivors by the same keys, so a window's survivors stay contiguous and in raster order.
"""

from __future__ import annotations

from typing import Literal

import torch

from paperkit import check_bool, check_choice, check_int, check_tensor, param_error

__all__ = [
    "grid_coords",
    "inverse",
    "sort_keys",
    "order_from_coords",
    "raster_order",
    "window_order",
]

MAX_SIDE = 2**15  # grids up to 32768 tokens a side keep every sort key below 2**62


def _side(name: str, owner: str, value: int) -> int:
    return check_int(name, owner, value, low=1, high=MAX_SIDE)


def grid_coords(h: int, w: int) -> torch.Tensor:
    """The (row, column) of every token of an h × w grid in raster order, LongTensor (h·w, 2).

    >>> grid_coords(2, 3).tolist()
    [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    """
    h, w = _side("h", "grid_coords", h), _side("w", "grid_coords", w)
    r, c = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    return torch.stack([r.reshape(-1), c.reshape(-1)], dim=1)


def raster_order(h: int, w: int) -> torch.Tensor:
    """The raster scan of an h × w grid: ``arange(h·w)`` (Vim's order).

    >>> raster_order(2, 2).tolist()
    [0, 1, 2, 3]
    """
    h, w = _side("h", "raster_order", h), _side("w", "raster_order", w)
    return torch.arange(h * w)


def sort_keys(coords: torch.Tensor, kind: str, s: int) -> torch.Tensor:
    """Sort keys (..., L) of coords (..., L, 2) for the raster or the window-major order."""
    r, c = coords[..., 0], coords[..., 1]
    if kind == "raster":
        return r * MAX_SIDE + c
    window = (r // s) * MAX_SIDE + c // s
    return window * (s * s) + (r % s) * s + c % s


def window_order(h: int, w: int, s: int, reverse: bool = False) -> torch.Tensor:
    """The window-major scan of an h × w grid with s × s windows (AMVim abstract, path W).

    Windows in raster order, tokens in raster order inside each window; border windows are
    partial when s does not divide h or w (the same as padding and skipping the padding).
    ``reverse`` reads the whole order backwards. Requires ``1 <= s <= min(h, w)``.

    >>> window_order(4, 4, 2).tolist()
    [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]
    """
    owner = "window_order"
    h, w = _side("h", owner, h), _side("w", owner, w)
    s = check_int("s", owner, s, low=1, high=min(h, w))
    reverse = check_bool("reverse", owner, reverse)
    order = torch.argsort(sort_keys(grid_coords(h, w), "window", s))
    return order.flip(0) if reverse else order


def order_from_coords(
    coords: torch.Tensor, kind: Literal["raster", "window"] = "raster", s: int = 1
) -> torch.Tensor:
    """The scan order of tokens at ``coords`` (their original (row, column) on the grid).

    Shapes:
        coords: (L, 2) or (B, L, 2), non-negative integers below 32768.
        returns: LongTensor (L,) or (B, L): a permutation of ``range(L)`` per batch entry.

    ``kind="raster"`` sorts by (r, c); ``kind="window"`` sorts window-major with s × s windows
    (windows in raster order, raster inside each, partly empty windows allowed). NaN policy: not
    applicable (integer input); negative or duplicate coordinates are refused.

    >>> import torch
    >>> coords = torch.tensor([[0, 0], [0, 2], [1, 1], [2, 0], [2, 3]])  # survivors of a 4x4
    >>> order_from_coords(coords, "window", 2).tolist()
    [0, 2, 1, 3, 4]
    """
    owner = "order_from_coords"
    check_tensor("coords", owner, coords, ndim=(2, 3), dtype="int")
    if coords.shape[-1] != 2:
        raise param_error("coords", owner, "of shape (L, 2) or (B, L, 2)", tuple(coords.shape))
    if int(coords.min()) < 0 or int(coords.max()) >= MAX_SIDE:
        raise param_error("coords", owner, f"integers in [0, {MAX_SIDE})", "out-of-range entries")
    check_choice("kind", owner, kind, ("raster", "window"))
    s = check_int("s", owner, s, low=1, high=MAX_SIDE)
    keys = sort_keys(coords.long(), kind, s)
    if (keys.sort(dim=-1).values.diff(dim=-1) == 0).any():
        raise param_error("coords", owner, "distinct (row, column) pairs", "duplicates")
    return torch.argsort(keys, dim=-1)


def inverse(perm: torch.Tensor) -> torch.Tensor:
    """The inverse permutation: ``inverse(perm)[perm[i]] == i``, along the last axis.

    Shapes: perm (L,) or (B, L), a permutation of ``range(L)`` per row; returns the same shape.
    NaN policy: not applicable (integer input); a non-permutation is refused.

    >>> inverse(torch.tensor([2, 0, 1])).tolist()
    [1, 2, 0]
    """
    check_tensor("perm", "inverse", perm, ndim=(1, 2), dtype="int")
    L = perm.shape[-1]
    ok = torch.equal(perm.sort(dim=-1).values, torch.arange(L).expand_as(perm).to(perm))
    if not ok:
        raise param_error("perm", "inverse", f"a permutation of range({L})", "another tensor")
    out = torch.empty_like(perm)
    out.scatter_(-1, perm, torch.arange(L, device=perm.device).expand_as(perm).to(perm))
    return out
