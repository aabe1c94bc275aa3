"""Scan orders: a worked 4 × 4 example (AMVim abstract), permutations, inverse, pruned orders."""

import pytest
import torch

from amvim.orders import grid_coords, inverse, order_from_coords, raster_order, window_order
from paperkit.testing import assert_param_error


def test_window_order_worked_example():
    # 4x4 grid, 2x2 windows: windows in raster order, raster inside each (AMVim abstract)
    assert window_order(4, 4, 2).tolist() == [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]
    assert window_order(4, 4, 2, reverse=True).tolist() == window_order(4, 4, 2).flip(0).tolist()


@pytest.mark.parametrize(("h", "w", "s"), [(8, 8, 2), (8, 8, 4), (7, 5, 3), (14, 14, 7), (6, 9, 4)])
def test_orders_are_permutations_and_inverse_round_trips(h, w, s):
    for perm in (raster_order(h, w), window_order(h, w, s), window_order(h, w, s, True)):
        assert sorted(perm.tolist()) == list(range(h * w))
        inv = inverse(perm)
        assert torch.equal(perm[inv], torch.arange(h * w))
        assert torch.equal(inv[perm], torch.arange(h * w))


def test_partial_border_windows_are_contiguous():
    # 5x5 with s=2: windows of 4, 2 (right border), 2 (bottom border) and 1 (corner) tokens
    order = window_order(5, 5, 2)
    coords = grid_coords(5, 5)[order]
    window = (coords[:, 0] // 2) * 3 + coords[:, 1] // 2
    assert torch.equal(window, window.sort().values)  # windows visited one after the other
    assert torch.bincount(window).tolist() == [4, 4, 2, 4, 4, 2, 2, 2, 1]


def test_one_window_is_the_raster_order():
    assert torch.equal(window_order(6, 6, 6), raster_order(6, 6))


def test_order_from_coords_matches_grid_orders():
    coords = grid_coords(8, 8)
    assert torch.equal(order_from_coords(coords, "raster"), raster_order(8, 8))
    assert torch.equal(order_from_coords(coords, "window", 4), window_order(8, 8, 4))


def test_pruned_window_order_keeps_each_windows_survivors_contiguous_and_raster():
    g = torch.Generator().manual_seed(0)
    full = grid_coords(8, 8)
    for trial in range(5):
        keep = torch.randperm(64, generator=g)[: 20 + trial * 7].sort().values
        coords = full[keep]
        order = order_from_coords(coords, "window", 2)
        seen = coords[order]
        win = (seen[:, 0] // 2) * 4 + seen[:, 1] // 2
        assert torch.equal(win, win.sort().values)  # contiguous, windows in raster order
        raster = seen[:, 0] * 8 + seen[:, 1]
        for wid in win.unique():
            inside = raster[win == wid]
            assert torch.equal(inside, inside.sort().values)  # raster inside the window
    batched = order_from_coords(torch.stack([full[:10], full[5:15]]), "window", 2)
    assert batched.shape == (2, 10)


def test_order_errors():
    assert_param_error(window_order, 4, 4, 0, param="s")
    assert_param_error(window_order, 4, 6, 5, param="s")  # s > min(h, w)
    assert_param_error(order_from_coords, torch.tensor([[0, 0], [0, 0]]), param="coords")
    assert_param_error(inverse, torch.tensor([0, 0, 1]), param="perm")
