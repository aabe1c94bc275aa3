"""The DDIM sampler: closed forms of DDIM (Song et al., eq. 12) and diffusers when installed."""

import math

import pytest
import torch

from gradspo import DDIMScheduler


@pytest.mark.parametrize("schedule", ["scaled_linear", "linear", "cosine"])
def test_oracle_eps_recovers_x0_with_eta_zero(schedule):
    # closed form: with eps(x_t) = (x_t - sqrt(abar_t) x0)/sqrt(1 - abar_t), x̂0 = x0 at every
    # step, and with eta = 0 and abar = 1 after the last step the sampler returns x0 exactly.
    s = DDIMScheduler(1000, schedule, set_alpha_to_one=True)
    s.set_timesteps(20)
    g = torch.Generator().manual_seed(0)
    x0 = torch.randn(6, 3, generator=g, dtype=torch.float64)
    x = torch.randn(6, 3, generator=g, dtype=torch.float64)
    for t in s.timesteps.tolist():
        a = float(s.alphas_cumprod[t])
        eps = (x - math.sqrt(a) * x0) / math.sqrt(1 - a)
        x, mu, sigma, x0_hat = s.step(eps, t, x, eta=0.0)
        assert torch.allclose(x0_hat, x0, rtol=0, atol=1e-10)
        assert float(sigma.abs().max()) == 0.0
    assert (x - x0).abs().max() < 1e-10


def test_sigma_and_mean_match_the_closed_form():
    # sigma_t = eta sqrt((1-abar_p)/(1-abar_t)) sqrt(1 - abar_t/abar_p);
    # mu = sqrt(abar_p) x̂0 + sqrt(1 - abar_p - sigma²) eps  (DDIM, eq. 12)
    s = DDIMScheduler(1000, "scaled_linear")
    s.set_timesteps(10)
    x = torch.randn(4, 2, dtype=torch.float64)
    eps = torch.randn(4, 2, dtype=torch.float64)
    z = torch.randn(4, 2, dtype=torch.float64)
    t, p = 700, 600
    a_t, a_p = float(s.alphas_cumprod[t]), float(s.alphas_cumprod[p])
    sig = 0.7 * math.sqrt((1 - a_p) / (1 - a_t)) * math.sqrt(1 - a_t / a_p)
    x0 = (x - math.sqrt(1 - a_t) * eps) / math.sqrt(a_t)
    mu = math.sqrt(a_p) * x0 + math.sqrt(1 - a_p - sig**2) * eps
    x_prev, mu_s, sigma_s, x0_s = s.step(eps, t, x, eta=0.7, noise=z)
    assert torch.allclose(sigma_s, torch.full((4,), sig, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(mu_s, mu, atol=1e-12) and torch.allclose(x0_s, x0, atol=1e-12)
    assert torch.allclose(x_prev, mu + sig * z, atol=1e-12)
    # a per-sample timestep tensor gives the same rows
    tt = torch.tensor([700, 300, 700, 300])
    rows = s.step(eps, tt, x, eta=0.7, noise=z)[0]
    assert torch.allclose(rows[0], x_prev[0], atol=1e-12)
    assert torch.allclose(rows[1], s.step(eps, 300, x, eta=0.7, noise=z)[0][1], atol=1e-12)


def test_betas_of_each_schedule():
    # diffusers' definitions: linspace, linspace of square roots squared, cosine capped at 0.999
    lin = DDIMScheduler(1000, "linear", beta_start=1e-4, beta_end=0.02)
    assert abs(float(lin.betas[0]) - 1e-4) < 1e-15 and abs(float(lin.betas[-1]) - 0.02) < 1e-15
    sl = DDIMScheduler(1000, "scaled_linear")
    assert abs(float(sl.betas[-1]) - 0.012) < 1e-15
    assert (
        abs(float(sl.betas[500]) - (0.00085**0.5 + 500 / 999 * (0.012**0.5 - 0.00085**0.5)) ** 2)
        < 1e-15
    )
    cos = DDIMScheduler(1000, "cosine")
    assert float(cos.betas.max()) <= 0.999 and float(cos.alphas_cumprod[-1]) < 1e-4


def test_log_prob_is_the_gaussian_density():
    x = torch.randn(5, 3, dtype=torch.float64)
    mu = torch.randn(5, 3, dtype=torch.float64)
    sigma = torch.rand(5, dtype=torch.float64) + 0.1
    ref = torch.distributions.Normal(mu, sigma[:, None]).log_prob(x).sum(1)
    assert torch.allclose(DDIMScheduler.log_prob(x, mu, sigma), ref, atol=1e-12)


@pytest.mark.parametrize("schedule", ["scaled_linear", "linear", "squaredcos_cap_v2"])
def test_matches_diffusers(schedule):
    diffusers = pytest.importorskip("diffusers")
    ours = DDIMScheduler(
        1000,
        "cosine" if schedule == "squaredcos_cap_v2" else schedule,
        beta_start=0.00085,
        beta_end=0.012,
        set_alpha_to_one=False,
    )
    theirs = diffusers.DDIMScheduler(
        num_train_timesteps=1000,
        beta_schedule=schedule,
        beta_start=0.00085,
        beta_end=0.012,
        clip_sample=False,
        set_alpha_to_one=False,
        steps_offset=0,
    )
    ours.set_timesteps(20)
    theirs.set_timesteps(20)
    assert ours.timesteps.tolist() == theirs.timesteps.tolist()
    x = torch.randn(3, 4)
    eps = torch.randn(3, 4)
    z = torch.randn(3, 4)
    for t in ours.timesteps.tolist():
        mine = ours.step(eps, t, x, eta=1.0, noise=z)
        out = theirs.step(
            eps.view(3, 4, 1, 1), t, x.view(3, 4, 1, 1), eta=1.0, variance_noise=z.view(3, 4, 1, 1)
        )
        assert (mine[0] - out.prev_sample.view(3, 4)).abs().max() < 1e-6
        assert (mine[3] - out.pred_original_sample.view(3, 4)).abs().max() < 1e-6
