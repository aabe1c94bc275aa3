"""The cascade planning head (paper Sec. 3.4)."""

import pytest
import torch

from gaussianfusion.gaussians import init_uniform
from gaussianfusion.planning import CascadePlanningHead, cascade_loss, kmeans_anchors
from paperkit.testing import assert_close


def _anchor_set(m=64, seed=0):
    gen = torch.Generator().manual_seed(seed)
    t = 0.5 * torch.arange(1, 9)
    speed = 4 + 6 * torch.rand(m, 1, generator=gen)
    lat = torch.randn(m, 1, generator=gen) * 0.2 * t**2
    return torch.stack([speed * t, lat], -1)


def _inputs(b=3, d=16):
    torch.manual_seed(0)
    g = init_uniform(b, (4, 4), d_e=d, d_m=d)
    g = g.replace(explicit=torch.randn_like(g.explicit), implicit=torch.randn_like(g.implicit))
    return g, torch.randn(b, 4), torch.tensor([0, 1, 2])[:b]


def test_zero_initialised_offsets_return_the_anchors_at_every_stage():
    head = CascadePlanningHead(n_anchors=8, n_waypoints=8, n_stages=3, d=16)
    head.set_anchors(_anchor_set())
    g, ego, cmd = _inputs()
    out = head(g, ego, cmd)
    assert out["trajs"].shape == (3, 3, 8, 8, 2) and out["scores"].shape == (3, 3, 8)
    for s in range(3):
        assert torch.equal(out["trajs"][:, s], head.anchors.expand(3, -1, -1, -1))
    pick = out["scores"][:, -1].argmax(-1)
    assert torch.equal(out["best"], head.anchors[pick])


def test_kmeans_anchors_recover_separated_clusters():
    base = _anchor_set(3, seed=1)
    trajs = base.repeat_interleave(20, 0) + 0.01 * torch.randn(60, 8, 2)
    centres = kmeans_anchors(trajs, 3, seed=0)
    dist = torch.cdist(centres.flatten(1), base.flatten(1))
    assert float(dist.min(0).values.max()) < 0.05  # every true cluster has a centre near it


def test_anchors_with_other_waypoint_counts_are_refused():
    head = CascadePlanningHead(n_anchors=4, n_waypoints=8, d=16)
    with pytest.raises(ValueError, match="'trajs'"):
        head.set_anchors(torch.randn(20, 6, 2))


def test_geometric_bias_prefers_gaussians_on_the_trajectory():
    head = CascadePlanningHead(n_anchors=2, n_waypoints=8, n_stages=1, d=16)
    g = init_uniform(1, (2, 1), ((0.0, 40.0), (-10.0, 10.0)), 16, 16)
    g = g.replace(mean=torch.tensor([[[10.0, 0.0], [10.0, 8.0]]]), log_scale=torch.zeros(1, 2, 2))
    traj = torch.stack([2.5 * torch.arange(1, 9).float(), torch.zeros(8)], -1)[None, None]
    bias = head.bias(g, traj.expand(1, 2, 8, 2))
    assert bias.shape == (1, 2, 2)
    assert float(bias[0, 0, 0]) > 0 > float(bias[0, 0, 1])  # on the path vs 8 m to the side
    assert float(bias[0, 0, 1]) == pytest.approx(torch.log(torch.tensor(0.05)).item(), abs=1e-3)


def test_geometric_bias_equals_a_naive_loop_for_rotated_gaussians():
    """bias_{a,i} = log(eps + sum_w exp(-1/2 (w - mu_i)^T Sigma_i^-1 (w - mu_i))) (Sec. 3.4),
    written out with an explicit 2 x 2 inverse, in float64."""
    head = CascadePlanningHead(n_anchors=3, n_waypoints=8, n_stages=1, d=16).double()
    gen = torch.Generator().manual_seed(4)
    g = init_uniform(2, (2, 3), d_e=8, d_m=8, dtype=torch.float64)
    g = g.replace(
        mean=10 * torch.randn(2, 6, 2, generator=gen, dtype=torch.float64),
        log_scale=0.5 + torch.randn(2, 6, 2, generator=gen, dtype=torch.float64),
        rotation=3 * torch.randn(2, 6, generator=gen, dtype=torch.float64),
    )
    trajs = 8 * torch.randn(2, 3, 8, 2, generator=gen, dtype=torch.float64)
    got = head.bias(g, trajs)
    want = torch.empty(2, 3, 6, dtype=torch.float64)
    for b in range(2):
        for i in range(6):
            c, s = torch.cos(g.rotation[b, i]), torch.sin(g.rotation[b, i])
            sx2, sy2 = torch.exp(2 * g.log_scale[b, i])
            sxx = c * c * sx2 + s * s * sy2
            syy = s * s * sx2 + c * c * sy2
            sxy = c * s * (sx2 - sy2)
            det = sxx * syy - sxy * sxy
            for a in range(3):
                dx, dy = (trajs[b, a] - g.mean[b, i]).unbind(-1)
                m2 = (syy * dx * dx - 2 * sxy * dx * dy + sxx * dy * dy) / det
                want[b, a, i] = torch.log(0.05 + torch.exp(-0.5 * m2).sum())
    assert_close(got, want, rtol=1e-10, atol=1e-10)


def test_winner_takes_all_loss_uses_the_closest_trajectory():
    expert = torch.zeros(1, 8, 2)
    trajs = torch.stack([torch.full((8, 2), 1.0), torch.full((8, 2), 0.2)])[None, None]
    scores = torch.tensor([[[0.0, 0.0]]])
    loss = cascade_loss({"trajs": trajs, "scores": scores}, expert)
    # winner = trajectory 1: L1 0.2 + CE(uniform over 2) = log 2
    assert loss.item() == pytest.approx(0.2 + torch.log(torch.tensor(2.0)).item(), abs=1e-6)


def test_the_head_learns_to_pick_and_refine():
    torch.manual_seed(0)
    head = CascadePlanningHead(n_anchors=4, n_waypoints=8, n_stages=2, d=16)
    head.set_anchors(_anchor_set())
    g, ego, cmd = _inputs()
    expert = _anchor_set(3, seed=5) + 0.3
    # Adam written out: the first torch.optim step imports torch._dynamo (slow on a loaded CPU)
    params = list(head.parameters())
    m1 = [torch.zeros_like(p) for p in params]
    m2 = [torch.zeros_like(p) for p in params]
    first = None
    for step in range(1, 61):
        loss = cascade_loss(head(g, ego, cmd), expert)
        first = first if first is not None else loss.item()
        grads = torch.autograd.grad(loss, params, allow_unused=True)
        with torch.no_grad():
            for p, gr, a, b in zip(params, grads, m1, m2, strict=True):
                if gr is None:
                    continue
                a.mul_(0.9).add_(0.1 * gr)
                b.mul_(0.999).add_(0.001 * gr * gr)
                p -= 3e-3 * (a / (1 - 0.9**step)) / ((b / (1 - 0.999**step)).sqrt() + 1e-8)
    assert loss.item() < 0.5 * first
    assert_close(head.anchors.shape[0], 4, rtol=0, atol=0)
