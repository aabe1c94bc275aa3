r"""The serpentine ("snake", the paper's :math:`\natural`) patch orders of an image grid.

For an :math:`h\times w` patch grid in raster order, the row-wise boustrophedon visits row 0 left to
right, row 1 right to left, and so on; the column-wise one visits column 0 top to bottom, column 1
bottom to top, and so on. Tokens before the grid (a class token) keep their places at the front.
"""

from __future__ import annotations

import math

import torch

from paperkit import Described, check_int, param_error

__all__ = ["grid_for", "snake_orders"]


def snake_orders(h: int, w: int, prefix: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Row-wise and column-wise serpentine permutations of ``prefix + h * w`` tokens.

    ``x[..., perm, :]`` is the sequence in that order; ``perm.argsort()`` undoes it.

    >>> [p.tolist() for p in snake_orders(2, 2)]
    [[0, 1, 3, 2], [0, 2, 3, 1]]
    """
    h = check_int("h", "snake_orders", h, low=1)
    w = check_int("w", "snake_orders", w, low=1)
    prefix = check_int("prefix", "snake_orders", prefix, low=0)
    grid = torch.arange(h * w).reshape(h, w)
    rows = grid.clone()
    rows[1::2] = rows[1::2].flip(-1)
    cols = grid.t().clone()
    cols[1::2] = cols[1::2].flip(-1)
    head = torch.arange(prefix)
    return tuple(torch.cat([head, prefix + order.flatten()]) for order in (rows, cols))


def grid_for(name: str, owner: str, n: int, grid: tuple[int, int] | None) -> tuple[int, int, int]:
    """``(h, w, prefix)`` for the ``n`` tokens of the argument ``name``: ``n = h * w`` or
    ``h * w + 1`` (a leading class token); a square grid when ``grid`` is None."""
    if grid is None:
        for prefix in (0, 1):
            side = math.isqrt(max(n - prefix, 0))
            if side > 0 and side * side == n - prefix:
                return side, side, prefix
        expected = "of a square number of tokens (plus one class token) for order='snake'"
        raise param_error(name, owner, expected, Described(f"{n} tokens"))
    h, w = grid
    if n - h * w not in (0, 1):
        expected = f"of h * w or h * w + 1 tokens for the grid (h, w) = {tuple(grid)}"
        raise param_error(name, owner, expected, Described(f"{n} tokens"))
    return h, w, n - h * w
