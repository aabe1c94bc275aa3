"""Correctness check 7: the pixel environments and their scripted experts."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from bcvlr import PixelGridReach, PixelPointReach, make_expert_videos, make_vector_env
from bcvlr.envs import GRID_PERMUTATION, MOVES, grid_expert_action, point_expert_action


@pytest.mark.parametrize("env_id", ["bcvlr/PixelGridReach-v0", "bcvlr/PixelPointReach-v0"])
def test_envs_pass_the_gymnasium_checker(env_id):
    check_env(gym.make(env_id).unwrapped, skip_render_check=True)


def test_bfs_expert_takes_the_optimal_number_of_steps_with_walls():
    env = PixelGridReach(walls=10)
    for seed in range(20):
        env.reset(seed=seed)
        optimal = env.shortest_path_length()
        # the shortest path length by brute force: a breadth-first flood from the agent
        frontier, seen, d = {tuple(env.agent)}, {tuple(env.agent)}, 0
        while tuple(env.goal) not in frontier:
            frontier = {
                (r + dr, c + dc)
                for r, c in frontier
                for dr, dc in MOVES[1:]
                if env._free(np.array([r + dr, c + dc]))
            } - seen
            seen |= frontier
            d += 1
        assert optimal == d
        for t in range(optimal):
            _, r, term, trunc, _ = env.step(grid_expert_action(env))
            assert (term, r) == (t == optimal - 1, float(t == optimal - 1))


def test_actions_follow_the_fixed_permutation():
    assert sorted(GRID_PERMUTATION) == list(range(5))
    assert (np.arange(5) != GRID_PERMUTATION).any()
    env = PixelGridReach()
    for a in range(5):
        env.reset(seed=0)
        env.agent = np.array([4, 4])
        env.goal = np.array([0, 0])
        env.step(a)
        assert tuple(env.agent - [4, 4]) == tuple(MOVES[GRID_PERMUTATION[a]])


def test_point_expert_reaches_the_target():
    env = PixelPointReach()
    for seed in range(5):
        env.reset(seed=seed)
        for _ in range(40):
            _, r, term, _, _ = env.step(point_expert_action(env))
            if term:
                break
        assert term and r == 1.0


def test_expert_videos_and_vector_envs():
    v = make_expert_videos("bcvlr/PixelGridReach-v0", 3, seed=0)
    assert v.shape[0] == 3 and v.shape[2:] == (3, 32, 32)
    finite = ~v.isnan().flatten(2).all(-1)
    assert finite[:, :2].all() and float(v[finite].max()) <= 1.0
    vec = make_vector_env("bcvlr/PixelPointReach-v0", 3)
    obs, _ = vec.reset(seed=0)
    assert obs.shape == (3, 32, 32, 3) and obs.dtype == np.uint8
