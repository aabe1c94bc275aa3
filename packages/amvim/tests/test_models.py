"""Models and pruning: ρ = 1 reproduces the logits, FLOPs follow the token schedule, survivors
keep coordinates and raster order, scores, seeds, errors."""

import math

import pytest
import torch

from amvim.models import AMVim, TinyViT, Vim
from amvim.pruning import TokenPruner
from paperkit.testing import assert_param_error, check_seeded_determinism

SMALL = {"img_size": 16, "patch_size": 2, "dim": 16, "depth": 6, "d_state": 4}


def _models():
    torch.manual_seed(0)
    return {
        "Vim": Vim(**SMALL),
        "AMVim": AMVim(**SMALL, window_sizes=[2, 4]),
        "ViT": TinyViT(img_size=16, patch_size=2, dim=16, depth=6),
        "AMVim-middle": AMVim(**SMALL, cls="middle"),
    }


@pytest.mark.parametrize("name", ["Vim", "AMVim", "ViT", "AMVim-middle"])
def test_keep_ratio_one_reproduces_the_unpruned_logits_exactly(name):
    model = _models()[name].eval()
    x = torch.randn(3, 1, 16, 16)
    with torch.no_grad():
        assert torch.equal(model(x, pruner=TokenPruner([2, 4], 1.0)), model(x))
        pruned = model(x, pruner=TokenPruner([2, 4], 0.5))
    assert pruned.shape == (3, 10) and not torch.equal(pruned, model(x))


def test_flops_follow_the_token_schedule():
    models = _models()
    vim, am, vit = models["Vim"], models["AMVim"], models["ViT"]
    for rho, kept in (
        (1.0, [64] * 6),
        (0.7, [64, 64, 45, 45, 32, 32]),
        (0.5, [64, 64, 32, 32, 16, 16]),
    ):
        pruner = TokenPruner([2, 4], rho)
        assert pruner.lengths(64, 6) == kept  # ceil(rho L) at each pruning layer
        # Mamba blocks are linear in L: block FLOPs scale with the summed token counts
        blocks = vim.flops(pruner) - vim.flops(TokenPruner([2, 4], 1.0)) * 0
        fixed = vim.flops(None) - vim._block_flops(64) * 6
        assert blocks - fixed == vim._block_flops(1) * sum(kept)
        assert am.flops(pruner) == vim.flops(pruner)  # identical FLOPs (AMVim abstract)
        assert vit.flops(pruner) <= vit.flops(None)
    f = [vim.flops(TokenPruner([2, 4], r)) for r in (1.0, 0.7, 0.5)]
    assert f[0] > f[1] > f[2]


def test_pruner_keeps_coordinates_and_raster_order():
    x = torch.randn(2, 16, 8)
    coords = torch.stack(torch.meshgrid(torch.arange(4), torch.arange(4), indexing="ij"), -1)
    coords = coords.reshape(16, 2)
    kept, where = TokenPruner([1], 0.5).prune(x, coords)
    assert kept.shape == (2, 8, 8) and where.shape == (2, 8, 2)
    norms = x.norm(dim=-1)
    for b in range(2):
        idx = norms[b].topk(8).indices.sort().values
        assert torch.equal(kept[b], x[b, idx])
        assert torch.equal(where[b], coords[idx])
        raster = where[b, :, 0] * 4 + where[b, :, 1]
        assert torch.equal(raster, raster.sort().values)


def test_mean_sim_and_random_scores():
    x = torch.randn(1, 10, 4)
    x[0, 3] = x[0].mean(0) * 0  # the zero token is never 'least like the mean' ... but
    mean = x.mean(1, keepdim=True)
    cos = torch.nn.functional.cosine_similarity(x, mean, dim=-1)
    kept, _ = TokenPruner([1], 0.3, "mean_sim").prune(
        x, torch.zeros(10, 2, dtype=torch.long) + torch.arange(10)[:, None]
    )
    want = (-cos[0]).topk(3).indices.sort().values
    assert torch.equal(kept[0], x[0, want])
    coords = torch.stack([torch.arange(10), torch.zeros(10, dtype=torch.long)], 1)
    a, _ = TokenPruner([1], 0.5, "random", seed=3).prune(x, coords, layer=1)
    b, _ = TokenPruner([1], 0.5, "random", seed=3).prune(x, coords, layer=1)
    c, _ = TokenPruner([1], 0.5, "random", seed=4).prune(x, coords, layer=1)
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_class_token_survives_pruning():
    x = torch.randn(2, 17, 4)
    x[:, -1] = 0  # the smallest norm: it would be dropped if it were scored
    coords = torch.stack(torch.meshgrid(torch.arange(4), torch.arange(4), indexing="ij"), -1)
    kept, where = TokenPruner([1], 0.25).prune(x, coords.reshape(16, 2), middle_cls=True)
    assert kept.shape == (2, 5, 4) and torch.equal(kept[:, -1], x[:, -1])
    assert where.shape == (2, 4, 2)


def test_equal_size_and_seeded_determinism():
    models = _models()
    count = {k: sum(p.numel() for p in m.parameters()) for k, m in models.items()}
    assert count["Vim"] == count["AMVim"]
    x = torch.randn(2, 1, 16, 16)
    check_seeded_determinism(lambda: AMVim(**SMALL)(x, pruner=TokenPruner([2, 4], 0.5, "random")))


def test_model_errors():
    assert_param_error(AMVim, **SMALL, window_sizes=[2, 9], param="window_sizes")  # s > grid 8
    assert_param_error(AMVim, **SMALL, window_sizes=[0], param="window_sizes")
    assert_param_error(TokenPruner, [2], 0.0, param="keep_ratio")
    assert_param_error(TokenPruner, [2], 1.5, param="keep_ratio")
    assert math.ceil(0.7 * 64) == TokenPruner([1], 0.7).kept(64)
