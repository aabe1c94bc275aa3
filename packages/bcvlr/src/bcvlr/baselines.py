r"""Baselines of the paper's comparison (Sec. 4), written compactly here.

* :class:`BCO`: behavioural cloning from observation (Torabi et al., 2018), iterated: an IDM
  :math:`p(a_t \mid o_{t-1}, o_t, o_{t+1})` is trained by supervised learning on the interaction
  data only, labels the video clips, and the policy clones those labels; same online loop and
  budget as BCV-LR.
* :class:`BCWithActions`: behaviour cloning on the expert's true actions (an upper bound, not
  video-only).
* :class:`PPO`: proximal policy optimisation (Schulman et al., 2017) with rewards, a small
  IMPALA actor-critic, GAE(:math:`\lambda`); discrete actions.
* :func:`random_policy`: uniform random actions.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F

from bcvlr.agent import check_action_space, check_obs_shape, checked_stepper, sample_actions
from bcvlr.config import BCVLRConfig
from bcvlr.data import ExpertData, VideoClips, to_frames
from bcvlr.envs import check_env_id
from bcvlr.layers import ImpalaCNN
from bcvlr.online import EvalPoint, EvalResult, Stepper, evaluate_policy, run_online
from paperkit import check_int, check_real, describe, param_error

__all__ = ["BCO", "BCWithActions", "PPO", "random_policy"]


def _net(in_channels: int, hw: tuple[int, int], cfg: BCVLRConfig, out_dim: int) -> ImpalaCNN:
    """A stride-free IMPALA CNN on raw frames (the same widths as BCV-LR's IDM and policy)."""
    return ImpalaCNN(
        (in_channels, *hw), cfg.impala_channels, cfg.impala_scale, cfg.features, out_dim
    )


class _Evaluated:
    """Evaluation shared by the baselines over ``episodes`` episodes."""

    def act_frames(self, frames, generator=None, deterministic=False):  # pragma: no cover
        raise NotImplementedError

    def evaluate(
        self, env: gym.Env | str, episodes: int = 100, deterministic: bool = False
    ) -> EvalResult:
        """Success rate and return of the policy (see :func:`bcvlr.evaluate_policy`): actions
        drawn from its softmax (a seeded draw, as BCV-LR is scored), argmax when
        ``deterministic``."""
        episodes = check_int(
            "episodes", f"{type(self).__name__}.evaluate", episodes, low=1, high=100_000
        )
        gen = torch.Generator().manual_seed(self.seed + 2)
        return evaluate_policy(
            lambda f: self.act_frames(f, gen, deterministic=deterministic), env, episodes
        )


class BCWithActions(_Evaluated):
    """Behaviour cloning with the expert's actions: CE (discrete) or MSE (box) of a pixel
    IMPALA policy, ``steps`` Adam steps (lr ``lr``, batch ``batch``). NaN policy: NaN frames
    are video padding (:class:`bcvlr.VideoClips`); other NaN refused."""

    def __init__(
        self,
        obs_shape: tuple[int, int, int],
        action_space: gym.Space,
        config: BCVLRConfig | None = None,
        seed: int = 0,
    ) -> None:
        self.obs_shape = check_obs_shape(obs_shape, "BCWithActions")
        self.discrete, out_dim = check_action_space(action_space, "BCWithActions")
        self.config = config or BCVLRConfig.small()
        self.seed = check_int("seed", "BCWithActions", seed, low=0)
        with torch.random.fork_rng():
            torch.manual_seed(self.seed)
            self.net = _net(3, self.obs_shape[1:], self.config, out_dim)

    def fit(
        self, data: ExpertData, steps: int = 1000, lr: float = 5e-4, batch: int = 64
    ) -> list[float]:
        """Train on the labelled expert clips; returns the loss curve."""
        if not isinstance(data, ExpertData):
            raise param_error(
                "data", "BCWithActions.fit", "an ExpertData", describe(data), cls=TypeError
            )
        steps = check_int("steps", "BCWithActions.fit", steps, low=1, high=1_000_000)
        lr = check_real("lr", "BCWithActions.fit", lr, low=0, low_open=True, high=1)
        batch = check_int("batch", "BCWithActions.fit", batch, low=1, high=65536)
        clips = VideoClips(data.videos, "BCWithActions.fit")
        n, t = clips.index.unbind(1)
        actions = data.actions[n, t]
        gen = torch.Generator().manual_seed(self.seed)
        opt = torch.optim.Adam(self.net.parameters(), lr=lr)
        curve = []
        for _ in range(steps):
            rows, clip = clips.sample(batch, gen)
            out = self.net(clip[:, 1])
            a = actions[rows]
            loss = F.cross_entropy(out, a) if self.discrete else F.mse_loss(out, a)
            opt.zero_grad()
            loss.backward()
            opt.step()
            curve.append(float(loss.detach()))
        return curve

    def act_frames(self, frames, generator=None, deterministic=False) -> np.ndarray:
        with torch.no_grad():
            return sample_actions(self.net(frames), self.discrete, generator, deterministic)


class BCO(_Evaluated):
    """BCO on videos with the BCV-LR online loop: per iteration ``3 * idm_updates`` supervised
    IDM steps on the collected clips (lr ``idm_lr_bco``), relabelling of every video clip, and
    ``policy_updates`` cloning steps. NaN policy: as :class:`BCWithActions`."""

    def __init__(
        self,
        obs_shape: tuple[int, int, int],
        action_space: gym.Space,
        config: BCVLRConfig | None = None,
        seed: int = 0,
        idm_lr_bco: float = 1e-3,
    ) -> None:
        self.obs_shape = check_obs_shape(obs_shape, "BCO")
        self.discrete, out_dim = check_action_space(action_space, "BCO")
        self.action_space = action_space
        self.config = config or BCVLRConfig.small()
        self.seed = check_int("seed", "BCO", seed, low=0)
        self.idm_lr = check_real("idm_lr_bco", "BCO", idm_lr_bco, low=0, low_open=True, high=1)
        hw = self.obs_shape[1:]
        with torch.random.fork_rng():
            torch.manual_seed(self.seed)
            self.idm = _net(9, hw, self.config, out_dim)
            self.policy = _net(3, hw, self.config, out_dim)
        self.clips: VideoClips | None = None
        self.opts = (
            torch.optim.Adam(self.idm.parameters(), lr=self.idm_lr),
            torch.optim.Adam(self.policy.parameters(), lr=5e-4),
        )

    def pretrain(self, videos: torch.Tensor) -> dict[str, list[float]]:
        """BCO learns nothing from unlabelled videos offline: the clips are kept for labelling."""
        self.clips = VideoClips(videos, "BCO.pretrain")
        if tuple(videos.shape[2:]) != self.obs_shape:
            raise param_error(
                "videos", "BCO.pretrain", f"frames of shape {self.obs_shape}", describe(videos)
            )
        return {}

    def online(
        self,
        env: Any,
        budget_steps: int,
        *,
        eval_env: Any = None,
        eval_at: tuple[int, ...] = (),
        eval_episodes: int = 100,
    ) -> list[EvalPoint]:
        """The BCV-LR interaction loop with BCO's update (class docstring)."""
        budget = check_int("budget_steps", "BCO.online", budget_steps, low=1, high=10_000_000)
        stepper = checked_stepper(env, self.obs_shape, self.action_space, "BCO.online")
        if self.clips is None:
            raise RuntimeError("BCO.online needs the videos: call pretrain(videos) first")
        evaluate = None
        if eval_env is not None:
            evaluate = lambda: self.evaluate(eval_env, eval_episodes)  # noqa: E731
        with torch.random.fork_rng():
            torch.manual_seed(self.seed + 1)
            return run_online(
                self, stepper, budget, seed=self.seed + 1, evaluate=evaluate, eval_at=eval_at
            )

    def update(self, buffer, generator: torch.Generator) -> dict[str, float]:
        cfg = self.config
        idm_opt, pol_opt = self.opts
        batch = min(cfg.online_batch, len(buffer))
        for _ in range(3 * cfg.idm_updates):
            clip, actions = buffer.sample(batch, generator)
            out = self.idm(clip.flatten(1, 2))
            loss = F.cross_entropy(out, actions) if self.discrete else F.mse_loss(out, actions)
            idm_opt.zero_grad()
            loss.backward()
            idm_opt.step()
        with torch.no_grad():
            rows = torch.arange(len(self.clips))
            out = torch.cat([self.idm(self.clips.clips(r).flatten(1, 2)) for r in rows.split(512)])
            labels = out.argmax(-1) if self.discrete else out.clamp(-1, 1)
        for _ in range(cfg.policy_updates):
            rows, clip = self.clips.sample(cfg.policy_batch, generator)
            out = self.policy(clip[:, 1])
            bc = (
                F.cross_entropy(out, labels[rows])
                if self.discrete
                else F.mse_loss(out, labels[rows])
            )
            pol_opt.zero_grad()
            bc.backward()
            pol_opt.step()
        return {"idm": float(loss.detach()), "clone": float(bc.detach())}

    def act_frames(self, frames, generator=None, deterministic=False) -> np.ndarray:
        with torch.no_grad():
            return sample_actions(self.policy(frames), self.discrete, generator, deterministic)


class PPO(_Evaluated):
    """PPO with the environment's rewards (clip 0.2, GAE gamma 0.99 / lambda 0.95, 4 epochs of
    4 minibatches per rollout of ``num_envs x num_steps``, entropy 0.01, Adam lr 5e-4) on a
    pixel IMPALA actor-critic. Discrete actions. Episode ends (terminal or time limit) cut the
    bootstrap."""

    def __init__(
        self,
        obs_shape: tuple[int, int, int],
        action_space: gym.Space,
        config: BCVLRConfig | None = None,
        seed: int = 0,
        lr: float = 5e-4,
    ) -> None:
        self.obs_shape = check_obs_shape(obs_shape, "PPO")
        discrete, n = check_action_space(action_space, "PPO")
        if not discrete:
            raise param_error(
                "action_space", "PPO", "a Discrete space", describe(action_space), cls=TypeError
            )
        self.n, self.config, self.action_space = n, config or BCVLRConfig.small(), action_space
        self.seed = check_int("seed", "PPO", seed, low=0)
        self.lr = check_real("lr", "PPO", lr, low=0, low_open=True, high=1)
        with torch.random.fork_rng():
            torch.manual_seed(self.seed)
            self.net = _net(3, self.obs_shape[1:], self.config, n + 1)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=self.lr)

    def act_frames(self, frames, generator=None, deterministic=False) -> np.ndarray:
        with torch.no_grad():
            return sample_actions(self.net(frames)[:, :-1], True, generator, deterministic)

    def learn(
        self,
        env: gym.vector.VectorEnv,
        budget_steps: int,
        *,
        eval_env: Any = None,
        eval_at: tuple[int, ...] = (),
        eval_episodes: int = 100,
    ) -> list[EvalPoint]:
        """Train for ``budget_steps`` interactions (with rewards); evaluate at ``eval_at``."""
        budget = check_int("budget_steps", "PPO.learn", budget_steps, low=1, high=10_000_000)
        stepper = checked_stepper(env, self.obs_shape, self.action_space, "PPO.learn")
        gen = torch.Generator().manual_seed(self.seed + 1)
        n_env, cfg = stepper.n, self.config
        obs, _ = stepper.env.reset(seed=self.seed + 1)
        obs = obs if stepper.vector else obs[None]
        used, points = 0, []
        pending = sorted(b for b in set(eval_at) if b <= budget)
        while True:
            while pending and used + n_env > pending[0]:
                b = pending.pop(0)
                if eval_env is not None:
                    r = self.evaluate(eval_env, eval_episodes)
                    points.append(EvalPoint(b, used, r.success, r.mean_return))
            if used + n_env > budget:
                return points
            steps = min(cfg.num_steps, (min([budget, *pending]) - used) // n_env)
            obs, used = self._rollout_and_update(stepper, obs, steps, gen), used + steps * n_env

    def _rollout_and_update(
        self, stepper: Stepper, obs: np.ndarray, steps: int, gen: torch.Generator
    ) -> np.ndarray:
        frames, actions, logps, values, rewards, dones = [], [], [], [], [], []
        for _ in range(steps):
            f = to_frames(obs)
            with torch.no_grad():
                out = self.net(f)
            a = torch.multinomial(out[:, :-1].softmax(-1), 1, generator=gen)[:, 0]
            logps.append(out[:, :-1].log_softmax(-1).gather(1, a[:, None])[:, 0])
            nxt, r, term, trunc, _ = stepper.env.step(a.numpy() if stepper.vector else int(a[0]))
            if not stepper.vector:
                nxt, r, term, trunc = nxt[None], np.array([r]), np.array([term]), np.array([trunc])
                if term[0] or trunc[0]:
                    nxt = stepper.env.reset()[0][None]
            frames.append(f), actions.append(a), values.append(out[:, -1])
            rewards.append(torch.as_tensor(r, dtype=torch.float32))
            dones.append(torch.as_tensor(term | trunc, dtype=torch.float32))
            obs = nxt
        with torch.no_grad():
            last = self.net(to_frames(obs))[:, -1]
        adv, gae = torch.zeros(steps, stepper.n), torch.zeros(stepper.n)
        for t in reversed(range(steps)):
            nv = last if t == steps - 1 else values[t + 1]
            delta = rewards[t] + 0.99 * nv * (1 - dones[t]) - values[t]
            gae = delta + 0.99 * 0.95 * (1 - dones[t]) * gae
            adv[t] = gae
        ret = (adv + torch.stack(values)).flatten()
        f, a, lp = torch.cat(frames), torch.cat(actions), torch.cat(logps)
        adv = adv.flatten()
        if len(adv) > 1:  # advantages normalised over the whole rollout
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        for _ in range(4):
            for mb in torch.randperm(len(a), generator=gen).chunk(4):
                out = self.net(f[mb])
                logp = out[:, :-1].log_softmax(-1)
                ratio = (logp.gather(1, a[mb, None])[:, 0] - lp[mb]).exp()
                norm = adv[mb]
                pg = -torch.min(ratio * norm, ratio.clamp(0.8, 1.2) * norm).mean()
                ent = -(logp.exp() * logp).sum(-1).mean()
                loss = pg + 0.5 * F.mse_loss(out[:, -1], ret[mb]) - 0.01 * ent
                self.opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), 0.5)
                self.opt.step()
        return obs


def random_policy(env: gym.Env | str, episodes: int = 100, seed: int = 0) -> EvalResult:
    """Success rate and return of uniformly random actions over ``episodes`` episodes."""
    episodes = check_int("episodes", "random_policy", episodes, low=1, high=100_000)
    seed = check_int("seed", "random_policy", seed, low=0)
    if not isinstance(env, (str, gym.Env)):
        raise param_error(
            "env", "random_policy", "a gymnasium Env or an env id", describe(env), cls=TypeError
        )
    space = (
        gym.make(check_env_id(env, "random_policy")) if isinstance(env, str) else env
    ).action_space
    rng = np.random.default_rng(seed)

    def act(frames: torch.Tensor) -> np.ndarray:
        if isinstance(space, gym.spaces.Discrete):
            return rng.integers(0, space.n, size=len(frames))
        return rng.uniform(space.low, space.high, size=(len(frames), *space.shape)).astype(
            np.float32
        )

    return evaluate_policy(act, env, episodes)
