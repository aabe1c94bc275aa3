"""The toy domain: data, denoiser, rewards, base training and the metrics."""

import math

import torch

from gradspo import DDIMScheduler, mean_reward, mmd_rbf, mode_coverage, sample
from gradspo.toy import EightGaussians, MLPDenoiser, directional, train_ddpm


def test_eight_gaussians_classes_cover_two_adjacent_modes():
    data = EightGaussians(radius=2.0, std=0.05)
    x, c = data.sample(4000, generator=torch.Generator().manual_seed(0))
    nearest = torch.cdist(x, data.centers).argmin(1)
    assert torch.equal(nearest // 2, c)  # class c owns modes 2c and 2c + 1
    assert abs(float(x.norm(dim=1).mean()) - 2.0) < 0.01
    counts = torch.bincount(nearest, minlength=8).float() / 4000
    assert float((counts - 1 / 8).abs().max()) < 0.03


def test_directional_reward_closed_form():
    r = directional(weight=0.5)
    # class 0 prefers angle π/4: its preferred mode scores 2 − 1 = 1, the other 2cos(π/4) − 1
    centers = EightGaussians().centers
    got = r(centers[[1, 0]], 0, torch.tensor([0, 0]))
    assert torch.allclose(got, torch.tensor([1.0, 2 * math.cos(math.pi / 4) - 1.0]), atol=1e-6)
    assert abs(mean_reward(r, centers[[1, 3, 5, 7]], torch.arange(4)) - 1.0) < 1e-6


def test_metrics_closed_forms():
    a = torch.randn(300, 2, generator=torch.Generator().manual_seed(0))
    assert mmd_rbf(a, a) == 0.0
    # far-apart sets: MMD² → k(a,a) + k(b,b) = 2 · (number of bandwidths) as the cross term vanishes
    far = mmd_rbf(torch.zeros(5, 2), torch.full((5, 2), 100.0), bandwidths=(0.5, 1.0))
    assert abs(far - 4.0) < 1e-12
    centers = EightGaussians().centers
    x = centers[torch.tensor([0, 0, 1, 2] * 25)]
    assert mode_coverage(x, centers) == 3 / 8
    assert mode_coverage(x, centers, min_frac=0.3) == 1 / 8  # only mode 0 holds half


def test_denoiser_cfg_and_base_training_lower_the_loss():
    torch.manual_seed(0)
    s = DDIMScheduler(set_alpha_to_one=False)
    net = MLPDenoiser(hidden=32)
    losses = train_ddpm(
        net,
        EightGaussians(),
        s,
        steps=150,
        batch_size=128,
        lr=3e-3,
        generator=torch.Generator().manual_seed(0),
    )
    assert sum(losses[-20:]) / 20 < 0.8 * sum(losses[:20]) / 20
    x = sample(
        net,
        s,
        torch.arange(4).repeat(5),
        steps=10,
        cfg_scale=3.0,
        generator=torch.Generator().manual_seed(1),
    )
    y = sample(
        net,
        s,
        torch.arange(4).repeat(5),
        steps=10,
        cfg_scale=3.0,
        generator=torch.Generator().manual_seed(1),
    )
    assert x.shape == (20, 2) and torch.equal(x, y)  # deterministic under a generator
    # the null label differs from every class label
    xt, t = torch.randn(4, 2), torch.full((4,), 500)
    assert not torch.allclose(net(xt, t, torch.full((4,), -1)), net(xt, t, torch.zeros(4).long()))
