"""Stepwise pair collection (the paper's data collection)."""

import pytest
import torch

from gradspo import DDIMScheduler, collect_stepwise_pairs
from gradspo.toy import MLPDenoiser, directional


def _setup():
    torch.manual_seed(0)
    model = MLPDenoiser(hidden=16).eval()
    s = DDIMScheduler(set_alpha_to_one=False)
    return model, s, directional()


def test_winner_has_the_highest_reward_and_g_is_half_the_noise_difference():
    model, s, reward = _setup()
    cond = torch.tensor([0, 1, 2, 3, 0])
    g = torch.Generator().manual_seed(3)
    p = collect_stepwise_pairs(
        model, s, cond, reward, K=4, steps=8, start_step=2, cfg_scale=2.0, generator=g
    )
    # steps 2..6 are stochastic (σ > 0), the last step has σ = 0 and gives no pair
    assert len(p) == 5 * 5 and set(p.step.tolist()) == {2, 3, 4, 5, 6}
    assert p.g.shape == p.x_t.shape == (25, 2) and p.rewards.shape == (25, 4)
    assert torch.equal(p.g, (p.z_win - p.z_lose) / 2)
    assert torch.allclose(p.gap, p.rewards.max(1).values - p.rewards.min(1).values)
    # recompute the winner's score: x̂0 of x_win under the sampler at the next step
    from gradspo.sampling import cfg_eps

    ts = s.timesteps
    t_next = ts[p.step + 1]
    with torch.no_grad():
        eps = cfg_eps(model, p.x_win, t_next, p.cond, 2.0)
    a = s.alpha_bar(t_next).float()[:, None]
    r_win = reward((p.x_win - (1 - a).sqrt() * eps) / a.sqrt(), 0, p.cond)
    assert torch.allclose(r_win, p.rewards.max(1).values, atol=1e-5)
    # candidates sit at μ + σ z: the winner minus loser is σ (z_win − z_lose)
    assert torch.allclose(p.x_win - p.x_lose, p.sigma[:, None] * (p.z_win - p.z_lose), atol=1e-5)


def test_deterministic_under_a_generator_and_gap_threshold_filters():
    model, s, reward = _setup()
    cond = torch.arange(4)

    def run(seed, gap=0.0):
        return collect_stepwise_pairs(
            model,
            s,
            cond,
            reward,
            K=3,
            steps=6,
            start_step=1,
            gap_threshold=gap,
            generator=torch.Generator().manual_seed(seed),
        )

    a, b, c = run(1), run(1), run(2)
    assert torch.equal(a.g, b.g) and torch.equal(a.final, b.final)
    assert not torch.equal(a.g, c.g)
    strict = run(1, gap=float(a.gap.median()))
    assert 0 < len(strict) < len(a) and bool((strict.gap > float(a.gap.median())).all())


def test_last_step_is_scored_on_the_final_sample():
    model, s, reward = _setup()
    s2 = DDIMScheduler(set_alpha_to_one=False)
    cond = torch.arange(4)
    p = collect_stepwise_pairs(
        model,
        s2,
        cond,
        reward,
        K=2,
        steps=3,
        start_step=0,
        generator=torch.Generator().manual_seed(0),
    )
    assert torch.allclose(p.final_reward, reward(p.final, 0, cond))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"K": 1}, "K"), ({"start_step": 20}, "start_step"), ({"steps": 0}, "steps")],
)
def test_errors_name_the_argument(kwargs, name):
    model, s, reward = _setup()
    with pytest.raises(ValueError, match=f"'{name}'"):
        collect_stepwise_pairs(model, s, torch.arange(2), reward, **kwargs)


def test_bad_reward_output_is_refused():
    model, s, _ = _setup()
    with pytest.raises(ValueError, match="'reward_fn'"):
        collect_stepwise_pairs(
            model, s, torch.arange(2), lambda x, t, c: x[:, 0] * float("nan"), steps=4, start_step=1
        )
    with pytest.raises(TypeError, match="'reward_fn'"):
        collect_stepwise_pairs(model, s, torch.arange(2), lambda x, t, c: x, steps=4, start_step=1)
