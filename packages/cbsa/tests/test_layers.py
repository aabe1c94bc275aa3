"""The CBSA layer: representatives (pool2d without the cls token, pool1d, learned), the
equivalence with contract_broadcast, equivariance, gradients, autocast and errors."""

import pytest
import torch
import torch.nn.functional as F
from einops import rearrange

from cbsa import CBSA
from cbsa.functional import contract_broadcast
from conftest import rand
from paperkit.testing import assert_close, check_seeded_determinism

D, H, P = 16, 2, 8


def layer64(**kw):
    torch.manual_seed(0)
    return CBSA(D, H, P, **kw).double()


def test_forward_is_contract_broadcast_on_pooled_patches():
    layer = layer64(num_reps=4)
    x = rand(2, 1 + 16, D, seed=1)
    w = rearrange(layer.proj(x), "b n (h p) -> b h n p", h=H)
    grid = rearrange(w[:, :, 1:], "b h (i j) p -> (b h) p i j", i=4)
    reps0 = rearrange(F.avg_pool2d(grid, 2), "(b h) p i j -> b h (i j) p", b=2)  # 4x4 -> 2x2
    out, A = contract_broadcast(w, reps0, layer.step_rep, layer.step_x)
    expected = layer.to_out(rearrange(out, "b h n p -> b n (h p)"))
    assert_close(layer(x), expected, rtol=1e-12, atol=1e-13)
    assert_close(layer(x, return_attn=True), A.transpose(-1, -2) @ A, rtol=1e-12, atol=1e-14)


def test_pool2d_leaves_the_cls_token_out():
    layer = layer64(num_reps=4)
    x = rand(1, 17, D, seed=2)
    y = x.clone()
    y[:, 0] += 5.0  # only the cls token changes
    w_x = rearrange(layer.proj(x), "b n (h p) -> b h n p", h=H)
    w_y = rearrange(layer.proj(y), "b n (h p) -> b h n p", h=H)
    assert torch.equal(layer.representatives(w_x), layer.representatives(w_y))


def test_pool1d_and_grid():
    layer = layer64(num_reps=3, rep_init="pool1d", has_cls=False)
    w = rand(1, H, 12, P, seed=3)
    reps = layer.representatives(w)
    assert_close(reps, w.view(1, H, 3, 4, P).mean(3), rtol=1e-14, atol=1e-15)
    rect = layer64(num_reps=4, grid=(2, 8), has_cls=True)
    assert rect(rand(1, 17, D, seed=4)).shape == (1, 17, D)


def test_learned_representatives_make_the_layer_permutation_equivariant():
    layer = layer64(num_reps=5, rep_init="learned")
    x = rand(2, 13, D, seed=5)
    perm = torch.randperm(13, generator=torch.Generator().manual_seed(6))
    assert_close(layer(x[:, perm]), layer(x)[:, perm], rtol=1e-12, atol=1e-13)


def test_gradcheck_through_the_layer():
    torch.manual_seed(0)
    layer = CBSA(8, 2, 4, num_reps=4).double()  # a 3 x 3 grid pooled (overlapping) to 2 x 2
    x = rand(1, 10, 8, seed=7).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: layer(t), (x,))
    params = [layer.step_rep, layer.step_x]
    assert torch.autograd.gradcheck(
        lambda a, b: torch.func.functional_call(layer, {"step_rep": a, "step_x": b}, (x,)),
        tuple(p.detach().clone().requires_grad_() for p in params),
    )


def test_seeded_determinism():
    def make():
        torch.manual_seed(3)
        return CBSA(D, H, P, num_reps=4)(torch.randn(2, 17, D))

    check_seeded_determinism(make)


def test_runs_under_autocast():
    layer = CBSA(D, H, P, num_reps=4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = layer(torch.randn(2, 17, D))
    assert y.dtype == torch.bfloat16 and bool(torch.isfinite(y).all())


@pytest.mark.parametrize(
    ("kwargs", "arg"),
    [
        ({"num_reps": 5}, "num_reps"),
        ({"dim_head": None, "heads": 3}, "heads"),
        ({"rep_init": "random"}, "rep_init"),
    ],
)
def test_construction_errors_name_the_argument(kwargs, arg):
    kw = {"dim": D, "heads": H, "dim_head": P, "num_reps": 4, **kwargs}
    with pytest.raises(ValueError, match=f"'{arg}'"):
        CBSA(**kw)


def test_token_count_must_form_the_grid():
    with pytest.raises(ValueError, match="'x'.*perfect square"):
        CBSA(D, H, P, num_reps=4)(torch.randn(1, 16, D))  # 15 patches + cls
    with pytest.raises(ValueError, match="'x'"):
        CBSA(D, H, P, num_reps=4, grid=(2, 8))(torch.randn(1, 16, D))
