"""The three losses: the identities of the paper's gradient-guidance reading."""

import math

import pytest
import torch

from gradspo import (
    DDIMScheduler,
    diffusion_dpo_loss,
    gradspo_logit,
    gradspo_loss,
    implied_step_weights,
    spo_logit,
)


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_unclipped_logit_identity_independent_of_ema():
    # beta (Q_θ^+ − Q_ref^+ − Q_θ^− + Q_ref^−) = −(4 β γ sqrt(1 − ᾱ_t)/D) <ε_θ − ε_ref, g>
    # (expand the squares: the ε_ema terms cancel), float64 to 1e-10
    B, D, beta, gamma = 7, 5, 10.0, 0.5
    e_t, e_r, g = _rand(B, D, seed=1), _rand(B, D, seed=2), _rand(B, D, seed=3)
    abar = torch.rand(B, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    want = -(4 * beta * gamma * (1 - abar).sqrt() / D) * ((e_t - e_r) * g).sum(1)
    for seed in (5, 6):  # two different EMA anchors, the same logit
        got = gradspo_logit(e_t, e_r, _rand(B, D, seed=seed), g, abar, beta, None, gamma)
        assert (got - want).abs().max() < 1e-10


def test_zero_guidance_or_equal_models_give_log2_and_no_gradient():
    e_t = _rand(4, 3, seed=1).requires_grad_(True)
    e_r, e_e, abar = _rand(4, 3, seed=2), _rand(4, 3, seed=3), torch.full((4,), 0.3).double()
    loss = gradspo_loss(e_t, e_r, e_e, torch.zeros(4, 3).double(), abar)
    assert abs(loss.item() - math.log(2)) < 1e-12
    loss.backward()
    assert float(e_t.grad.abs().max()) == 0.0
    same = gradspo_loss(e_r, e_r, e_e, _rand(4, 3, seed=9), abar)
    assert abs(float(same) - math.log(2)) < 1e-12


def test_one_sgd_step_moves_eps_theta_against_g():
    # minimising L decreases <ε_θ, g>: the sampling mean moves toward the winner's noise
    g = _rand(8, 4, seed=1)
    e_ref = _rand(8, 4, seed=2)
    e_t = e_ref.clone().requires_grad_(True)
    abar = torch.full((8,), 0.5).double()
    gradspo_loss(e_t, e_ref, _rand(8, 4, seed=3), g, abar).backward()
    before = float((e_t.detach() * g).sum())
    with torch.no_grad():
        e_t -= 0.1 * e_t.grad
    assert float((e_t.detach() * g).sum()) < before - 1e-6


def test_spo_log_prob_difference_is_linear_in_eps():
    # x_± = μ_ema + σ z_±, g = (z_+ − z_−)/2, μ_m = μ(ε_m):
    # [log p_θ(x_+) − log p_ref(x_+)] − [log p_θ(x_−) − log p_ref(x_−)]
    #     = 2 (b_t/σ_t) <g, ε_θ − ε_ref>
    s = DDIMScheduler()
    s.set_timesteps(20)
    x = _rand(6, 3, seed=1)
    t = 600
    e_t, e_r, e_e = _rand(6, 3, seed=2), _rand(6, 3, seed=3), _rand(6, 3, seed=4)
    z_w, z_l = _rand(6, 3, seed=5), _rand(6, 3, seed=6)
    zero = torch.zeros_like(x)
    _, mu_e, sigma, _ = s.step(e_e, t, x, noise=zero)
    _, mu_t, _, _ = s.step(e_t, t, x, noise=zero)
    _, mu_r, _, _ = s.step(e_r, t, x, noise=zero)
    x_w, x_l = mu_e + sigma[:, None] * z_w, mu_e + sigma[:, None] * z_l
    lp = DDIMScheduler.log_prob
    diff = (lp(x_w, mu_t, sigma) - lp(x_w, mu_r, sigma)) - (
        lp(x_l, mu_t, sigma) - lp(x_l, mu_r, sigma)
    )
    b = s.coefficients(torch.tensor(t))["b"]
    want = 2 * (b / sigma) * (((z_w - z_l) / 2) * (e_t - e_r)).sum(1)
    assert (diff - want).abs().max() < 1e-10
    # spo_logit averages over D (as SPO's code) and multiplies by beta
    got = spo_logit(mu_t, mu_r, x_w, x_l, sigma, beta=10.0, clip=None)
    assert (got - 10.0 * want / 3).abs().max() < 1e-10


def test_implied_step_weights_are_the_logit_coefficients():
    s = DDIMScheduler()
    s.set_timesteps(20)
    w = implied_step_weights(s, gamma=0.5, D=3, beta=10.0)
    i = 7
    t = int(w["timesteps"][i])
    e_t, e_r, e_e, g = (_rand(1, 3, seed=k) for k in range(4))
    abar = s.alpha_bar(torch.tensor([t]))
    logit = gradspo_logit(e_t, e_r, e_e, g, abar, 10.0, None, 0.5)
    inner = float(((e_t - e_r) * g).sum())
    assert abs(float(logit) + w["gradspo"][i] * inner) < 1e-10
    zero = torch.zeros(1, 3, dtype=torch.float64)
    x = _rand(1, 3, seed=9)
    _, mu_t, sigma, _ = s.step(e_t, t, x, noise=zero)
    _, mu_r, _, _ = s.step(e_r, t, x, noise=zero)
    x_w, x_l = mu_r + sigma * g, mu_r - sigma * g  # candidates with (z_w − z_l)/2 = g
    logit_spo = spo_logit(mu_t, mu_r, x_w, x_l, sigma, 10.0, None)
    assert abs(float(logit_spo) + w["spo"][i] * inner) < 1e-9  # b_t < 0: the same sign as GradSPO
    assert w["b"][i] < 0 and math.isnan(w["spo"][-1])  # the last step has σ = 0


def test_clipped_ratios_saturate_with_zero_gradient():
    e_r = _rand(5, 2, seed=1)
    e_t = (e_r + 50.0).requires_grad_(True)  # |Q_θ − Q_ref| ≫ log(1.1)
    loss = gradspo_loss(e_t, e_r, e_r, _rand(5, 2, seed=2), torch.full((5,), 0.5).double())
    assert abs(loss.item() - math.log(2)) < 1e-12  # both ratios clipped to the same bound
    loss.backward()
    assert float(e_t.grad.abs().max()) == 0.0
    # and for a small difference the gradient flows
    e_small = (e_r + 1e-3 * _rand(5, 2, seed=3)).requires_grad_(True)
    gradspo_loss(e_small, e_r, e_r, _rand(5, 2, seed=2), torch.full((5,), 0.5).double()).backward()
    assert float(e_small.grad.abs().max()) > 0


def test_diffusion_dpo_prefers_lower_error_on_the_winner():
    noise = _rand(6, 2, seed=1)
    ref = _rand(6, 2, seed=2)
    assert abs(float(diffusion_dpo_loss(ref, ref, ref, ref, noise, noise)) - math.log(2)) < 1e-12
    e_w = ref.clone().requires_grad_(True)
    loss = diffusion_dpo_loss(e_w, ref, ref, ref, noise, noise, beta=1.0)
    loss.backward()
    # the gradient on the winner's prediction points away from the noise: descent reduces its error
    with torch.no_grad():
        stepped = e_w - 0.1 * e_w.grad
    assert float(((stepped - noise) ** 2).sum()) < float(((ref - noise) ** 2).sum())


@pytest.mark.parametrize("bad", [{"beta": 0.0}, {"clip": 1.0}, {"clip": 0.0}, {"gamma": -0.5}])
def test_hyperparameter_errors_name_the_argument(bad):
    e = _rand(2, 2)
    args = {"beta": 10.0, "clip": 0.1, "gamma": 0.5, **bad}
    with pytest.raises(ValueError, match=f"'{next(iter(bad))}'"):
        gradspo_loss(e, e, e, e, torch.full((2,), 0.5).double(), **args)


def test_eps_and_g_shape_mismatch_is_refused():
    e = _rand(2, 3)
    with pytest.raises(ValueError, match="'g'"):
        gradspo_loss(e, e, e, _rand(2, 4), torch.full((2,), 0.5).double())
