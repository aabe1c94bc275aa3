"""Stage 2's interaction loop (Sec. 3.2 of the paper) and the evaluation of a policy.

The loop is shared by every learner that aligns from reward-free interaction (BCV-LR, LAPO,
BCO): seed the buffer with random steps, then repeat (update on the buffer and the videos;
collect ``num_envs x num_steps`` transitions with the current policy) until the budget is spent.
Rewards returned by the environment are dropped where they arrive (:class:`Stepper`), so they
cannot reach any learner. The policy is evaluated at the requested budgets, each time with the
parameters trained on at most that many interactions.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
import torch

from bcvlr.buffer import ClipBuffer
from bcvlr.data import to_frames
from bcvlr.envs import check_env_id
from paperkit import check_callable, check_int, describe, param_error

__all__ = ["EvalPoint", "EvalResult", "Stepper", "evaluate_policy", "run_online"]

ActFn = Callable[[torch.Tensor], np.ndarray]


@dataclass(frozen=True)
class EvalResult:
    """Success rate (goal reached), mean and sd of the return over ``episodes`` episodes."""

    success: float
    mean_return: float
    sd_return: float
    episodes: int


@dataclass(frozen=True)
class EvalPoint:
    """An evaluation at interaction budget ``budget``; ``interactions`` were actually used."""

    budget: int
    interactions: int
    success: float
    mean_return: float


class Stepper:
    """A ``gymnasium.Env`` or a ``VectorEnv`` (``AutoresetMode.SAME_STEP``) seen as ``n``
    environments stepped together; rewards are dropped here."""

    def __init__(self, env: Any, owner: str) -> None:
        if isinstance(env, gym.vector.VectorEnv):
            mode = env.metadata.get("autoreset_mode")
            if mode != gym.vector.AutoresetMode.SAME_STEP:
                raise param_error(
                    "env",
                    owner,
                    "a VectorEnv with autoreset_mode SAME_STEP (see bcvlr.make_vector_env)",
                    f"autoreset_mode {mode}",
                )
            self.vector, self.n = True, env.num_envs
            self.observation_space = env.single_observation_space
            self.action_space = env.single_action_space
        elif isinstance(env, gym.Env):
            self.vector, self.n = False, 1
            self.observation_space, self.action_space = env.observation_space, env.action_space
        else:
            raise param_error(
                "env", owner, "a gymnasium Env or VectorEnv", describe(env), cls=TypeError
            )
        self.env = env

    def reset(self, seed: int) -> np.ndarray:
        obs, _ = self.env.reset(seed=seed)
        return obs if self.vector else obs[None]

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(o_{t+1} of each env (the last frame where an episode ended), the frames to act on
        next, done flags)."""
        if self.vector:
            obs, _, term, trunc, info = self.env.step(actions)
            done = term | trunc
            nxt = obs.copy()
            for i in np.flatnonzero(done):
                nxt[i] = info["final_obs"][i]
            return nxt, obs, done
        obs, _, term, trunc, _ = self.env.step(actions[0])
        nxt = obs[None]
        if term or trunc:
            obs, _ = self.env.reset()
        return nxt, obs[None], np.array([term or trunc])


class Learner(Protocol):
    """What :func:`run_online` needs of a learner."""

    config: Any

    def update(self, buffer: ClipBuffer, generator: torch.Generator) -> dict[str, float]: ...

    def act_frames(
        self, frames: torch.Tensor, generator: torch.Generator, deterministic: bool = False
    ) -> np.ndarray: ...


def _random_actions(space: gym.Space, n: int, rng: np.random.Generator) -> np.ndarray:
    if isinstance(space, gym.spaces.Discrete):
        return rng.integers(0, space.n, size=n)
    return rng.uniform(space.low, space.high, size=(n, *space.shape)).astype(np.float32)


def run_online(
    learner: Learner,
    stepper: Stepper,
    budget_steps: int,
    *,
    seed: int,
    evaluate: Callable[[], EvalResult] | None = None,
    eval_at: Sequence[int] = (),
    log: list[dict[str, float]] | None = None,
) -> list[EvalPoint]:
    """Seed, then (update, collect) until ``budget_steps`` interactions; evaluate at
    ``eval_at`` (each budget gets the policy trained on at most that many interactions)."""
    cfg, n = learner.config, stepper.n
    space = stepper.action_space
    discrete = isinstance(space, gym.spaces.Discrete)
    frame = stepper.observation_space.shape
    buffer = ClipBuffer(cfg.buffer_size, frame, () if discrete else space.shape, discrete)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    obs = stepper.reset(seed)
    prev = obs.copy()
    used = 0

    def collect(steps: int, act: Callable[[np.ndarray], np.ndarray]) -> None:
        nonlocal obs, prev, used
        for _ in range(steps):
            actions = act(obs)
            nxt, cont, done = stepper.step(actions)
            buffer.add(np.stack([prev, obs, nxt], 1), actions)
            prev = np.where(done[:, None, None, None], cont, obs)
            obs = cont
            used += n

    def policy(o: np.ndarray) -> np.ndarray:
        return learner.act_frames(to_frames(o), gen)

    seed_steps = min(-(-cfg.seed_steps // n), budget_steps // n)
    collect(seed_steps, lambda o: _random_actions(space, n, rng))
    pending = sorted(b for b in set(eval_at) if b <= budget_steps)
    points: list[EvalPoint] = []
    while True:
        stats = learner.update(buffer, gen)
        if log is not None:
            log.append({"interactions": used, **stats})
        while pending and used + n > pending[0]:
            b = pending.pop(0)
            if evaluate is not None:
                r = evaluate()
                points.append(EvalPoint(b, used, r.success, r.mean_return))
        if used + n > budget_steps:
            return points
        limit = min([budget_steps, *pending])
        collect(min(cfg.num_steps, (limit - used) // n), policy)


def evaluate_policy(
    act: ActFn, env: gym.Env | str, episodes: int, seed: int = 10_000
) -> EvalResult:
    """Run ``episodes`` episodes in parallel copies of ``env`` (episode i reset with seed
    ``seed + i``); ``act`` maps frames (B, 3, H, W) to actions. Success: the episode ended with
    a positive return (the goal was reached)."""
    owner = "evaluate_policy"
    check_callable("act", owner, act)
    if isinstance(env, str):
        check_env_id(env, owner)
    elif not isinstance(env, gym.Env):
        raise param_error(
            "env", owner, "a gymnasium Env or an env id", describe(env), cls=TypeError
        )
    episodes = check_int("episodes", owner, episodes, low=1, high=100_000)
    seed = check_int("seed", owner, seed, low=0)
    envs = [gym.make(env) if isinstance(env, str) else copy.deepcopy(env) for _ in range(episodes)]
    obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)])
    returns = np.zeros(episodes)
    active = np.ones(episodes, dtype=bool)
    while active.any():
        idx = np.flatnonzero(active)
        with torch.no_grad():
            actions = act(to_frames(obs[idx]))
        for j, i in enumerate(idx):
            o, r, term, trunc, _ = envs[i].step(actions[j])
            obs[i], returns[i] = o, returns[i] + r
            active[i] = not (term or trunc)
    return EvalResult(
        float((returns > 0).mean()), float(returns.mean()), float(returns.std()), episodes
    )
