"""The Vim and AMVim blocks: AMVim with one window equals Vim, orders really differ, pruned
coordinates, middle class token, autocast."""

import torch

from amvim.blocks import AMVimBlock, VimBlock
from amvim.orders import grid_coords
from paperkit.testing import assert_close, assert_param_error, check_seeded_determinism


def _pair(s, **kw):
    torch.manual_seed(0)
    vim = VimBlock(16, d_state=4, **kw)
    am = AMVimBlock(16, window_size=s, window_reverse=True, d_state=4, **kw)
    am.load_state_dict(vim.state_dict())
    return vim, am


def test_one_window_covering_the_grid_equals_vim():
    vim, am = _pair(4)
    x = torch.randn(3, 16, 16)
    coords = grid_coords(4, 4)
    assert_close(am(x, coords), vim(x, coords), rtol=0, atol=1e-6)
    # the same with the middle class token
    xc = torch.randn(3, 17, 16)
    assert_close(
        am(xc, coords, middle_cls=True), vim(xc, coords, middle_cls=True), rtol=0, atol=1e-6
    )


def test_small_windows_change_the_output_and_only_path_two():
    vim, am = _pair(2)
    x = torch.randn(2, 16, 16)
    coords = grid_coords(4, 4)
    assert (am(x, coords) - vim(x, coords)).abs().max() > 1e-3
    # with path 2 switched off (out weights of its SSM zero via C = 0 is not a parameter):
    # equal parameters, so the difference must come from the order of path 2 alone
    assert sum(p.numel() for p in am.parameters()) == sum(p.numel() for p in vim.parameters())


def test_window_path_equals_explicit_permutation():
    # path W output at token i = SSM over the window-major reversed sequence, scattered back
    torch.manual_seed(1)
    am = AMVimBlock(8, window_size=2, d_state=4, backend="reference")
    x = torch.randn(1, 16, 8)
    coords = grid_coords(4, 4)
    xi, z = am.in_proj(am.norm(x)).chunk(2, dim=-1)
    from amvim.orders import window_order

    perm = window_order(4, 4, 2, reverse=True)
    y2 = torch.empty_like(xi)
    y2[:, perm] = am.path_2(xi[:, perm].transpose(1, 2), "reference").transpose(1, 2)
    y1 = am.path_1(xi.transpose(1, 2), "reference").transpose(1, 2)
    want = x + am.out_proj((y1 + y2) * torch.nn.functional.silu(z))
    assert_close(am(x, coords), want, rtol=0, atol=1e-6)


def test_batched_coords_equal_shared_coords_and_backends_agree():
    _, am = _pair(2)
    x = torch.randn(2, 16, 16)
    coords = grid_coords(4, 4)
    out = am(x, coords)
    assert_close(am(x, coords.expand(2, 16, 2).clone()), out, rtol=0, atol=1e-6)
    am.backend = "reference"
    assert_close(am(x, coords), out, rtol=0, atol=1e-5)


def test_autocast_and_determinism():
    _, am = _pair(2)
    x = torch.randn(2, 16, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = am(x, grid_coords(4, 4))
    assert torch.isfinite(y).all()
    check_seeded_determinism(
        lambda: AMVimBlock(16, 2, d_state=4)(torch.randn(2, 16, 16), grid_coords(4, 4))
    )


def test_block_errors():
    _, am = _pair(2)
    assert_param_error(am, torch.randn(2, 16, 16), grid_coords(3, 3), param="coords")
    assert_param_error(AMVimBlock, 16, 0, param="window_size")
