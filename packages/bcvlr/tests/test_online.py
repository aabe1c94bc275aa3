"""Correctness checks 6 and 10: rewards never reach the learner; determinism under a seed."""

import gymnasium as gym
import numpy as np
import torch

from bcvlr import BCO, BCVLR, make_expert_videos, make_vector_env
from bcvlr.buffer import ClipBuffer

GRID = "bcvlr/PixelGridReach-v0"


class NaNReward(gym.Wrapper):
    def step(self, action):
        obs, _, term, trunc, info = self.env.step(action)
        return obs, float("nan"), term, trunc, info


def _state(agent):
    return [
        t.clone()
        for m in (agent.idm, agent.policy, agent.decoder, agent.fm)
        for t in m.state_dict().values()
    ]


def test_buffer_has_no_reward_field():
    buf = ClipBuffer(4, (32, 32, 3), (), discrete=True)
    assert buf.fields == ("clips", "actions")
    assert not any("reward" in name for name in vars(buf))


def test_nan_rewards_give_identical_parameters(tiny):
    videos = make_expert_videos(GRID, 4, seed=0)
    states = []
    for wrap in (lambda e: e, NaNReward):
        agent = BCVLR((3, 32, 32), gym.spaces.Discrete(5), config=tiny, seed=0)
        agent.pretrain(videos)
        agent.online(wrap(gym.make(GRID)), 24)
        states.append(_state(agent))
    assert all(torch.equal(a, b) for a, b in zip(*states, strict=True))
    assert all(torch.isfinite(t).all() for t in states[0] if t.is_floating_point())


def test_pretraining_and_first_online_iteration_are_deterministic(tiny):
    videos = make_expert_videos(GRID, 4, seed=0)
    runs = []
    for _ in range(2):
        agent = BCVLR((3, 32, 32), gym.spaces.Discrete(5), config=tiny, seed=3)
        curves = agent.pretrain(videos)
        log: list = []
        agent.online(make_vector_env(GRID, 2), 12, log=log)
        runs.append(
            (curves, [{k: v for k, v in r.items() if k != "cpu_s"} for r in log], _state(agent))
        )
    (c1, l1, s1), (c2, l2, s2) = runs
    assert c1 == c2 and l1 == l2 and len(l1) >= 1
    assert all(torch.equal(a, b) for a, b in zip(s1, s2, strict=True))
    other = BCVLR((3, 32, 32), gym.spaces.Discrete(5), config=tiny, seed=4)
    assert other.pretrain(videos)["lam"] != c1["lam"]


def test_online_spends_exactly_the_budget_and_evaluates_at_it(tiny):
    agent = BCO((3, 32, 32), gym.spaces.Discrete(5), config=tiny, seed=0)
    agent.pretrain(make_expert_videos(GRID, 4, seed=0))
    points = agent.online(
        make_vector_env(GRID, 2), 20, eval_env=GRID, eval_at=(10, 20), eval_episodes=3
    )
    assert [p.budget for p in points] == [10, 20]
    assert all(p.interactions <= p.budget and 0 <= p.success <= 1 for p in points)
    assert points[-1].interactions == 20
    assert np.isfinite([p.mean_return for p in points]).all()
