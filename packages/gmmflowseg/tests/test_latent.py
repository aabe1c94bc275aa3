"""The GMM head, the flows, the mixture density and the KL terms (Sec. 3 of the paper)."""

import math

import pytest
import torch
from torch.autograd.functional import jacobian

from gmmflowseg.latent import (
    AffineCoupling,
    FlowSequence,
    GMMHead,
    GMMParams,
    MixtureLatent,
    PlanarFlow,
    kl_joint,
    kl_marginal,
)


def _randomise(module, seed=0, scale=0.5):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * scale)
    return module


def _params(B=3, K=4, D=6, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return GMMParams(
        torch.randn(B, K, generator=g, dtype=dtype),
        torch.randn(B, K, D, generator=g, dtype=dtype),
        0.2 + torch.rand(B, K, D, generator=g, dtype=dtype),
    )


def test_head_bounds_hold_for_huge_inputs():
    # tanh and sigmoid saturate to exactly +-1 and 0/1 in float32: closed bounds, finite values
    head = GMMHead(8, mu_max=2.0, sigma_min=0.05, sigma_max=0.5)
    h = torch.randn(16, 8) * 1e4
    p = head(h)
    assert torch.isfinite(p.logits).all() and torch.isfinite(p.mu).all()
    assert p.mu.abs().max() <= 2.0 and p.mu.abs().max() > 1.9  # saturated, not clamped away
    assert p.sigma.min() >= 0.05 and p.sigma.max() <= 0.5
    assert p.mu.shape == (16, 4, 6) and p.sigma.shape == (16, 4, 6) and p.logits.shape == (16, 4)


def test_unconstrained_head_is_not_bounded():
    head = _randomise(GMMHead(8, constrain=False), scale=1.0)
    p = head(torch.randn(16, 8) * 3)
    assert p.mu.abs().max() > 2.0 and p.sigma.max() > 0.5


@pytest.mark.parametrize("make", [lambda: PlanarFlow(6), lambda: AffineCoupling(6, 3, parity=1)])
def test_logdet_equals_autograd_jacobian(make):
    layer = _randomise(make().double(), seed=1)
    g = torch.Generator().manual_seed(2)
    z = torch.randn(5, 6, generator=g, dtype=torch.float64)
    cond = torch.randn(5, 3, generator=g, dtype=torch.float64)
    with torch.no_grad():
        _, logdet = layer(z, cond)
    for b in range(5):
        J = jacobian(lambda v, b=b: layer(v[None], cond[b : b + 1])[0][0], z[b])
        expected = torch.linalg.slogdet(J)[1]  # log|det J| of the autograd Jacobian
        assert abs(float(logdet[b] - expected)) < 1e-10


def test_planar_fix_keeps_invertibility():
    flow = PlanarFlow(6)
    with torch.no_grad():
        flow.w.copy_(torch.ones(6))
        flow.u.copy_(-5 * torch.ones(6))  # w.u = -30 < -1 before the fix
    assert float((flow.w @ flow.u_hat()).detach()) >= -1.0


def test_coupling_inverse_is_exact():
    flow = FlowSequence(
        [_randomise(AffineCoupling(6, 4, parity=i % 2), seed=i).double() for i in range(4)]
    )
    g = torch.Generator().manual_seed(3)
    z0 = torch.randn(7, 6, generator=g, dtype=torch.float64)
    cond = torch.randn(7, 4, generator=g, dtype=torch.float64)
    z, logdet = flow(z0, cond)
    back, logdet_inv = flow.inverse(z, cond)
    assert (back - z0).abs().max() < 1e-10
    assert (logdet_inv + logdet).abs().max() < 1e-10
    assert (z - z0).abs().max() > 0.1  # the randomised flow is not the identity


def test_planar_sequence_has_no_inverse():
    with pytest.raises(NotImplementedError):
        FlowSequence([PlanarFlow(6)]).inverse(torch.zeros(1, 6))


def test_mixture_log_prob_is_manual_logsumexp():
    p = _params()
    z = torch.randn(3, 6, dtype=torch.float64)
    got = MixtureLatent(p).log_prob(z)
    pi = torch.softmax(p.logits, -1)
    terms = []
    for k in range(4):
        normal = torch.distributions.Normal(p.mu[:, k], p.sigma[:, k])
        terms.append(torch.log(pi[:, k]) + normal.log_prob(z).sum(-1))
    assert (got - torch.logsumexp(torch.stack(terms, -1), -1)).abs().max() < 1e-12
    one = GMMParams(p.logits[:, :1], p.mu[:, :1], p.sigma[:, :1])
    ref = torch.distributions.Normal(p.mu[:, 0], p.sigma[:, 0]).log_prob(z).sum(-1)
    assert (MixtureLatent(one).log_prob(z) - ref).abs().max() < 1e-12


def test_rsample_is_seeded_and_picks_components():
    p = _params(B=2000, K=2, D=2)
    p = GMMParams(
        torch.log(torch.tensor([[0.8, 0.2]], dtype=torch.float64)).expand(2000, 2), p.mu, p.sigma
    )
    z1, c1 = MixtureLatent(p).rsample(torch.Generator().manual_seed(0))
    z2, c2 = MixtureLatent(p).rsample(torch.Generator().manual_seed(0))
    assert torch.equal(z1, z2) and torch.equal(c1, c2)
    frac = float((c1 == 0).double().mean())  # binomial(2000, 0.8): SE 0.009
    assert abs(frac - 0.8) < 0.04


def test_kl_joint_k1_equals_torch_closed_form():
    q, p = _params(K=1, seed=1), _params(K=1, seed=2)
    kl, kl_cat, kl_cont = kl_joint(q, p)
    ref = torch.distributions.kl_divergence(
        torch.distributions.Normal(q.mu[:, 0], q.sigma[:, 0]),
        torch.distributions.Normal(p.mu[:, 0], p.sigma[:, 0]),
    ).sum(-1)
    assert (kl - ref).abs().max() < 1e-10 and kl_cat.abs().max() < 1e-12


def test_kl_joint_with_identity_flow_matches_closed_form_by_monte_carlo():
    # 20k one-sample estimates of one (q, p) pair: mean within max(2%, 4 SE) of the closed form
    q1, p1 = _params(B=1, K=1, seed=3), _params(B=1, K=1, seed=4)
    n = 20_000
    q = GMMParams(*(t.expand(n, *t.shape[1:]) for t in q1))
    p = GMMParams(*(t.expand(n, *t.shape[1:]) for t in p1))
    flow = FlowSequence([AffineCoupling(6, 2, parity=i % 2) for i in range(2)]).double()
    cond = torch.zeros(n, 2, dtype=torch.float64)
    mc, _, _ = kl_joint(q, p, flow=flow, cond=cond, generator=torch.Generator().manual_seed(0))
    exact = float(kl_joint(q1, p1)[0])
    mc = mc.detach()
    se = float(mc.std() / math.sqrt(n))
    assert abs(float(mc.mean()) - exact) <= max(0.02 * exact, 4 * se)


def test_kl_joint_of_itself_is_zero_and_cat_term_is_closed_form():
    q = _params(K=4, seed=5)
    kl, kl_cat, kl_cont = kl_joint(q, q)
    assert kl.abs().max() < 1e-7
    p = _params(K=4, seed=6)
    _, kl_cat, _ = kl_joint(q, p)
    pq, pp = torch.softmax(q.logits, -1), torch.softmax(p.logits, -1)
    assert (kl_cat - (pq * torch.log(pq / pp)).sum(-1)).abs().max() < 1e-12


def test_kl_joint_bounds_the_marginal_kl():
    # chain rule: KL(q(c,z) || p(c,z)) >= KL(q(z) || p(z)); the MC marginal estimate agrees
    q1, p1 = _params(B=1, K=3, D=2, seed=7), _params(B=1, K=3, D=2, seed=8)
    n = 20_000
    q = GMMParams(*(t.expand(n, *t.shape[1:]) for t in q1))
    p = GMMParams(*(t.expand(n, *t.shape[1:]) for t in p1))
    marg = kl_marginal(q, p, generator=torch.Generator().manual_seed(1))
    joint = float(kl_joint(q1, p1)[0])
    assert float(marg.mean()) < joint + 4 * float(marg.std() / math.sqrt(n))


def test_prior_flow_changes_the_prior_density_exactly():
    # with an identity prior flow the joint KL estimate equals the no-prior-flow one sample-wise
    q, p = _params(B=4, K=2, D=4, seed=9), _params(B=4, K=2, D=4, seed=10)
    flow = FlowSequence([AffineCoupling(4, 0, parity=i % 2) for i in range(2)]).double()
    a = kl_joint(q, p, flow=flow, generator=torch.Generator().manual_seed(0))[0]
    b = kl_joint(q, p, flow=flow, prior_flow=flow, generator=torch.Generator().manual_seed(0))[0]
    assert (a - b).abs().max() < 1e-12


def test_sigma_bounds_are_checked():
    with pytest.raises(ValueError, match="'sigma_min'"):
        GMMHead(8, sigma_min=0.5, sigma_max=0.5)
    with pytest.raises(ValueError, match="'mu_max'"):
        GMMHead(8, mu_max=0.0)
