"""The models: KL against torch, gradients, the one-pass sampler, determinism, Fcomb."""

import pytest
import torch
import torch.nn.functional as F

from gmmflowseg.backbone import Fcomb
from gmmflowseg.models import DeterministicUNet, GMMFlowSegNet, ProbUNet


def _batch(B=3, size=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(B, 1, size, size, generator=g), torch.randint(
        0, 2, (B, size, size), generator=g
    )


def test_probunet_kl_is_torch_analytic_kl():
    torch.manual_seed(0)
    net = ProbUNet(1, 2, base=4, depth=2)
    x, y = _batch()
    (mu_p, s_p), (mu_q, s_q) = net.distributions(x, y)
    ref = (
        torch.distributions.kl_divergence(
            torch.distributions.Normal(mu_q, s_q), torch.distributions.Normal(mu_p, s_p)
        )
        .sum(-1)
        .mean()
    )
    assert abs(float(net.elbo(x, y)["kl"].detach() - ref.detach())) < 1e-6


@pytest.mark.parametrize(
    "kwargs",
    [
        {"flow": "planar"},
        {"flow": "coupling", "prior_flow": True},
        {"flow": None},
        {"flow": "planar", "kl": "marginal"},
        {"flow": "planar", "constrain": False},
    ],
)
def test_gmmflowseg_gradients_reach_every_parameter(kwargs):
    torch.manual_seed(0)
    net = GMMFlowSegNet(1, 2, base=4, depth=2, **kwargs)
    if kwargs.get("prior_flow"):  # a zero-initialised coupling passes no gradient to its
        for layer in net.prior_flow.layers:  # hidden layer; perturb the output layer
            torch.nn.init.normal_(layer.net[-1].weight, std=0.1)
        for layer in net.flow.layers:
            torch.nn.init.normal_(layer.net[-1].weight, std=0.1)
    x, y = _batch()
    out = net.elbo(x, y)
    out["loss"].backward()
    for name, p in net.named_parameters():
        assert p.grad is not None, name
        assert torch.isfinite(p.grad).all(), name
    assert abs((out["kl"] - out["kl_cat"] - out["kl_cont"]).item()) < 1e-5


def test_recon_is_exactly_marginalised_over_components():
    # recon = mean_b sum_c pi_q[c] CE(y, dec(F, z_c)): recompute it by hand with the same noise
    torch.manual_seed(0)
    net = GMMFlowSegNet(1, 2, base=4, depth=2, flow=None)
    x, y = _batch()
    torch.manual_seed(5)
    recon = net.elbo(x, y)["recon"]
    torch.manual_seed(5)
    feat = net.backbone(x)
    q, _ = net.posterior_params(x, y)
    z = q.mu + q.sigma * torch.randn_like(q.mu)
    pi = torch.softmax(q.logits, -1)
    total = 0
    for c in range(4):
        logits = net.fcomb(feat, z[:, c])
        ce = F.cross_entropy(logits, y, reduction="none").sum((-2, -1))
        total = total + pi[:, c] * ce
    assert abs(float((recon - total.mean()).detach())) < 1e-3 * float(recon.detach())


def test_sample_runs_backbone_and_prior_once():
    net = GMMFlowSegNet(1, 2, base=4, depth=2)
    calls = {"backbone": 0, "prior_net": 0, "post_net": 0}
    for name in calls:
        getattr(net, name).register_forward_hook(
            lambda *_, name=name: calls.__setitem__(name, calls[name] + 1)
        )
    logits, comps = net.sample(_batch()[0], 16)
    assert calls == {"backbone": 1, "prior_net": 1, "post_net": 0}
    assert logits.shape == (16, 3, 2, 8, 8) and comps.shape == (16, 3)
    assert comps.min() >= 0 and comps.max() < 4


def test_sample_is_deterministic_under_a_seed():
    torch.manual_seed(0)
    net = GMMFlowSegNet(1, 2, base=4, depth=2, flow="coupling")
    x = _batch()[0]
    a = net.sample(x, 5, generator=torch.Generator().manual_seed(1))
    b = net.sample(x, 5, generator=torch.Generator().manual_seed(1))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    c = net.sample(x, 5, generator=torch.Generator().manual_seed(2))
    assert not torch.equal(a[0], c[0])


def test_sample_uses_the_component_means():
    # with sigma_min ~ 0 components are nearly deterministic: same component -> same mask logits
    torch.manual_seed(0)
    net = GMMFlowSegNet(1, 2, base=4, depth=2, sigma_min=1e-9, sigma_max=2e-9, flow=None)
    logits, comps = net.sample(_batch(B=1)[0], 40, generator=torch.Generator().manual_seed(0))
    for c in comps.unique():
        same = logits[comps[:, 0] == c]
        assert (same - same[0]).abs().max() < 1e-5


def test_fcomb_equals_convolution_of_the_concatenation():
    torch.manual_seed(0)
    head = Fcomb(4, 3, 2)
    feat, z = torch.randn(2, 4, 5, 5), torch.randn(2, 3)
    w1 = torch.cat([head.feat_in.weight, head.z_in.weight[:, :, None, None]], 1)
    tiled = torch.cat([feat, z[:, :, None, None].expand(2, 3, 5, 5)], 1)
    h = F.relu(F.conv2d(tiled, w1, head.feat_in.bias))
    ref = head.out(F.relu(head.mid(h)))
    assert (head(feat, z) - ref).abs().max() < 1e-5


def test_deterministic_unet_and_probunet_samples():
    x, y = _batch()
    logits, comps = DeterministicUNet(1, 2, base=4, depth=2).sample(x, 4)
    assert (logits - logits[0]).abs().max() == 0 and comps.abs().max() == 0
    logits, _ = ProbUNet(1, 2, base=4, depth=2, flow="planar").sample(x, 4)
    assert logits.shape == (4, 3, 2, 8, 8) and (logits - logits[0]).abs().max() > 0


def test_models_refuse_bad_labels_and_sizes():
    net = GMMFlowSegNet(1, 2, base=4, depth=2)
    x, y = _batch()
    with pytest.raises(ValueError, match="'y'"):
        net.elbo(x, y + 1)  # label 2 >= n_classes
    with pytest.raises(ValueError, match="'y'"):
        net.elbo(x, y[:, :4])  # spatial size differs from x
    with pytest.raises(ValueError, match="'sigma_min'"):
        GMMFlowSegNet(1, 2, sigma_min=0.6)


@pytest.mark.parametrize(
    "make",
    [
        lambda: GMMFlowSegNet(1, 2, base=4, depth=2, flow="planar"),
        lambda: GMMFlowSegNet(1, 2, base=4, depth=2, flow="coupling", prior_flow=True),
        lambda: ProbUNet(1, 2, base=4, depth=2, flow="planar"),
        lambda: ProbUNet(1, 2, base=4, depth=2),
    ],
)
def test_models_run_under_autocast(make):
    # the U-Net and Fcomb follow autocast; the latent path (heads, flows, KL) stays in float32
    torch.manual_seed(0)
    net = make()
    x, y = _batch()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = net.elbo(x, y)
        logits, comps = net.sample(x, 3)
    out["loss"].backward()
    assert logits.dtype == torch.bfloat16 and torch.isfinite(logits).all()
    assert out["kl"].dtype == torch.float32 and torch.isfinite(out["loss"])
    assert all(p.grad is None or torch.isfinite(p.grad).all() for p in net.parameters())
