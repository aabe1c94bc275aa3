import math

import pytest
import torch

from graphtop import TopologyPrompt, entropy_loss, relax_edges, sparsity_loss, tau_schedule
from paperkit.testing import assert_close, assert_param_error


def test_low_temperature_is_nearly_binary_and_keeps_p():
    p = torch.tensor([0.1, 0.3, 0.5, 0.8, 0.95]).repeat_interleave(20_000)
    g = torch.Generator().manual_seed(0)
    m = relax_edges(p, 1e-3, generator=g)
    assert m.shape == p.shape and float(m.min()) >= 0 and float(m.max()) <= 1
    near = torch.minimum(m, 1 - m) < 1e-3
    assert near.float().mean() >= 0.99  # in between only when |logit p + eps| < tau ln 999
    freq = (m > 0.5).float().reshape(5, -1).mean(1)
    assert_close(freq, torch.tensor([0.1, 0.3, 0.5, 0.8, 0.95]), rtol=0, atol=0.01)


def test_relaxation_is_in_open_unit_interval_and_differentiable():
    p = torch.full((1000,), 0.3, requires_grad=True)
    m = relax_edges(p, 1.0, generator=torch.Generator().manual_seed(1))
    assert ((m > 0) & (m < 1)).all()
    m.sum().backward()
    assert torch.isfinite(p.grad).all() and (p.grad > 0).all()  # dm/dp > 0


def test_generator_controls_the_noise():
    p = torch.full((50,), 0.5)
    a = relax_edges(p, 0.5, torch.Generator().manual_seed(3))
    b = relax_edges(p, 0.5, torch.Generator().manual_seed(3))
    c = relax_edges(p, 0.5, torch.Generator().manual_seed(4))
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_entropy_term():
    assert_close(
        entropy_loss(torch.full((7,), 0.5, dtype=torch.float64)), math.log(2), rtol=1e-9, atol=1e-9
    )
    assert_close(
        entropy_loss(torch.tensor([0.0, 1.0, 1.0], dtype=torch.float64)), 0.0, rtol=0, atol=1e-8
    )


def test_sparsity_term():
    p = torch.tensor([0.2, 0.8, 0.5, 0.1, 0.9])
    index = torch.tensor([0, 0, 1, 2, 2])
    assert float(sparsity_loss(p, index, 0.5)) == pytest.approx(0.0, abs=1e-12)
    # subgraph means 0.5, 0.5, 0.5 vs target 0.3 -> 0.04
    assert float(sparsity_loss(p, index, 0.3)) == pytest.approx(0.04, abs=1e-7)
    # a subgraph without candidates (index 1 missing among 3) is left out of the mean
    assert float(sparsity_loss(torch.tensor([1.0, 0.0]), torch.tensor([0, 2]), 1.0, 3)) == 0.5


def test_tau_schedule():
    E = 40
    taus = [tau_schedule(e, E) for e in range(1, E + 1)]
    assert taus[0] == pytest.approx(0.97 * (1 - 1 / E) + 0.03)
    assert taus[-1] == pytest.approx(0.03)
    assert all(a > b for a, b in zip(taus, taus[1:], strict=False))
    assert_param_error(tau_schedule, 0, E, param="epoch")


def test_prompt_scores_are_probabilities():
    torch.manual_seed(0)
    scorer = TopologyPrompt(8, temperature=0.2)
    p = scorer(torch.randn(5, 8), torch.randn(5, 8))
    assert p.shape == (5,) and ((p >= 0) & (p <= 1)).all()
    sharper = TopologyPrompt(8, temperature=0.05)
    sharper.load_state_dict(scorer.state_dict())
    h = torch.randn(100, 8)
    # a lower temperature pushes the same scores further from 1/2
    assert (sharper(h, h) - 0.5).abs().mean() > (scorer(h, h) - 0.5).abs().mean()


def test_bad_inputs():
    assert_param_error(relax_edges, torch.tensor([0.5, 1.5]), 1.0, param="p")
    assert_param_error(relax_edges, torch.tensor([0.5]), 0.0, param="tau")
    assert_param_error(TopologyPrompt, 8, temperature=-1.0, param="temperature")
