r"""BCV-LR: behaviour cloning from videos via latent representations (Sec. 3 of the paper).

Offline, from action-free expert videos (:meth:`BCVLR.pretrain`):

1a. self-supervised encoder :math:`f` (contrastive + reconstruction, :mod:`bcvlr.ssl`);
1b. latent action model: :math:`la = \mathrm{IDM}(o_{t-1}, o_t, o_{t+1})`, :math:`la_q =
    \mathrm{VQ}(la)`, :math:`L = \|\mathrm{FM}([f(o_{t-1}), f(o_t)], la_q) - f(o_{t+1})\|^2 +
    L_{VQ}` (Adam, gradient clip 2);
1c. latent policy: :math:`\min \|\pi(o_t) - la\|^2`.

Online, reward-free (:meth:`BCVLR.online`), each iteration:

(i) ``idm_updates`` steps of :math:`\mathrm{CE}(h(la), a_t) + 15\,(L_{FM} + L_{VQ})` on
    collected clips (IDM lr 2e-5, decoder :math:`h` lr 1e-3; the forward model is not stepped);
(ii) ``policy_updates`` steps of :math:`\|\pi(o_t) - la\|^2` on video clips, relabelled by the
    updated IDM;
(iii) collect ``num_envs x num_steps`` transitions with :math:`a \sim \mathrm{Cat}(h(\pi(o)))`.
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F

from bcvlr.config import BCVLRConfig
from bcvlr.data import VideoClips, to_frames
from bcvlr.models import ActionDecoder, Encoder, ForwardModel, InverseDynamics, LatentPolicy
from bcvlr.online import EvalPoint, Stepper, evaluate_policy, run_online
from bcvlr.ssl import SelfSupervised
from paperkit import check_array, check_int, describe, param_error

__all__ = [
    "BCVLR",
    "LAPO",
    "check_action_space",
    "check_obs_shape",
    "checked_stepper",
    "sample_actions",
]


def check_obs_shape(obs_shape: Any, owner: str) -> tuple[int, int, int]:
    """``(3, H, W)`` with 8 <= H, W <= 256."""
    ok = (
        isinstance(obs_shape, (tuple, list))
        and len(obs_shape) == 3
        and all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in obs_shape)
    )
    if not ok:
        raise param_error(
            "obs_shape", owner, "a tuple (3, H, W)", describe(obs_shape), cls=TypeError
        )
    if obs_shape[0] != 3 or not all(8 <= s <= 256 for s in obs_shape[1:]):
        raise param_error(
            "obs_shape", owner, "(3, H, W) with 8 <= H, W <= 256", str(tuple(obs_shape))
        )
    return tuple(int(s) for s in obs_shape)


def check_action_space(space: Any, owner: str) -> tuple[bool, int]:
    """A ``Discrete`` or a 1-D ``Box`` space; returns (discrete, output width)."""
    if isinstance(space, gym.spaces.Discrete):
        return True, int(space.n)
    if isinstance(space, gym.spaces.Box) and len(space.shape) == 1:
        return False, int(space.shape[0])
    raise param_error(
        "action_space",
        owner,
        "a gymnasium Discrete or 1-D Box space",
        describe(space),
        cls=TypeError,
    )


def checked_stepper(
    env: Any, obs_shape: tuple[int, int, int], action_space: gym.Space, owner: str
) -> Stepper:
    """A :class:`~bcvlr.online.Stepper` over ``env`` after checking that its images are
    ``(H, W, 3)`` for ``obs_shape = (3, H, W)`` and that its action space is ``action_space``."""
    stepper = Stepper(env, owner)
    H, W = obs_shape[1:]
    if tuple(stepper.observation_space.shape) != (H, W, 3):
        raise param_error(
            "env",
            owner,
            f"observations of shape {(H, W, 3)}",
            f"shape {tuple(stepper.observation_space.shape)}",
        )
    if stepper.action_space != action_space:
        raise param_error(
            "env", owner, f"the action space {action_space}", f"{stepper.action_space}"
        )
    return stepper


def sample_actions(
    out: torch.Tensor, discrete: bool, generator: torch.Generator | None, deterministic: bool
) -> np.ndarray:
    """Actions from a head's output: argmax or a categorical draw of the logits (discrete);
    the output clipped to [-1, 1] (box)."""
    if not discrete:
        return out.clamp(-1, 1).numpy().astype(np.float32)
    if deterministic:
        return out.argmax(-1).numpy()
    return torch.multinomial(out.softmax(-1), 1, generator=generator)[:, 0].numpy()


class BCVLR:
    """The BCV-LR agent (module docstring): the shared encoder, IDM with VQ-EMA, UNet forward
    model, latent policy and action decoder.

    Args:
        obs_shape: frame shape ``(3, H, W)`` (videos (N, T, 3, H, W); env images (H, W, 3)).
        action_space: the environment's ``Discrete`` or 1-D ``Box`` action space.
        config: :meth:`BCVLRConfig.small` (default) or :meth:`BCVLRConfig.paper`.
        seed: seeds the initialisation, the batches and the online loop.

    NaN policy: NaN frames in ``videos`` are the padding after a video's end (see
    :class:`bcvlr.VideoClips`); any other NaN or inf is refused.
    """

    owner = "BCVLR"

    def __init__(
        self,
        obs_shape: tuple[int, int, int],
        action_space: gym.Space,
        config: BCVLRConfig | None = None,
        seed: int = 0,
    ) -> None:
        self.obs_shape = check_obs_shape(obs_shape, self.owner)
        self.discrete, out_dim = check_action_space(action_space, self.owner)
        self.action_space = action_space
        if config is not None and not isinstance(config, BCVLRConfig):
            raise param_error(
                "config", self.owner, "a BCVLRConfig", describe(config), cls=TypeError
            )
        self.config = self._configure(config or BCVLRConfig.small())
        self.seed = check_int("seed", self.owner, seed, low=0)
        cfg, hw = self.config, self.obs_shape[1:]
        with torch.random.fork_rng():
            torch.manual_seed(self.seed)
            self.encoder = Encoder(cfg)
            self.idm = InverseDynamics(self.encoder, hw, cfg)
            self.fm = ForwardModel(self.encoder, hw, cfg)
            self.policy = LatentPolicy(self.encoder, hw, cfg)
            self.decoder = ActionDecoder(cfg.d_la, out_dim, cfg.decoder_hidden)
        self.clips: VideoClips | None = None
        self.labels: torch.Tensor | None = None
        self._online_opts: tuple[torch.optim.Optimizer, ...] | None = None
        #: CPU seconds of the last pretraining's stages (``ssl``, ``lam``, ``policy``).
        self.timings: dict[str, float] = {}

    def _configure(self, config: BCVLRConfig) -> BCVLRConfig:
        return config

    # ---- offline -------------------------------------------------------------------------
    def pretrain(self, videos: torch.Tensor) -> dict[str, list[float]]:
        """Stages 1a-1c on action-free videos (N, T, 3, H, W) in [0, 1] (NaN frames: padding
        after a video's end). Returns the loss curves ``{"ssl", "lam", "policy"}``."""
        clips = VideoClips(videos, f"{self.owner}.pretrain")
        if tuple(videos.shape[2:]) != self.obs_shape:
            raise param_error(
                "videos",
                f"{self.owner}.pretrain",
                f"frames of shape {self.obs_shape}",
                describe(videos),
            )
        cfg = self.config
        gen = torch.Generator().manual_seed(self.seed)
        clock = time.process_time()
        with torch.random.fork_rng():
            torch.manual_seed(self.seed)
            curves: dict[str, list[float]] = {"ssl": [], "lam": [], "policy": []}
            if cfg.ssl_steps:
                ssl = SelfSupervised(self.encoder, self.obs_shape[1:], cfg)
                for _ in range(cfg.ssl_steps):
                    curves["ssl"].append(ssl.step(clips.sample(cfg.ssl_batch, gen)[1][:, 1], gen))
            self.timings["ssl"], clock = time.process_time() - clock, time.process_time()
            self.encoder.requires_grad_(False)
            self.fm.set_scale(clips.sample(256, gen)[1][:, 1])
            params = self.idm.trainable() + self.fm.trainable()
            opt = torch.optim.Adam(params, lr=cfg.lam_lr)
            self.idm.train()
            for _ in range(cfg.lam_steps):
                clip = clips.sample(cfg.lam_batch, gen)[1]
                out = self.idm(clip)
                loss = self.fm.loss(clip, out.la_q) + out.vq_loss
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
                opt.step()
                curves["lam"].append(float(loss.detach()))
            self.timings["lam"], clock = time.process_time() - clock, time.process_time()
            self.clips = clips
            self._relabel()
            self.decoder.standardise(self.labels)
            opt = torch.optim.Adam(self.policy.trainable(), lr=cfg.policy_lr)
            for _ in range(cfg.policy_steps):
                curves["policy"].append(self._clone_step(opt, gen, cfg.policy_batch))
            self.timings["policy"] = time.process_time() - clock
        return curves

    def _relabel(self) -> None:
        """:math:`la = \\mathrm{IDM}(clip).la` for every video clip (the IDM in eval mode, fixed
        while the policy is cloned; computed once instead of per batch)."""
        self.idm.eval()
        with torch.no_grad():
            rows = torch.arange(len(self.clips))
            self.labels = torch.cat([self.idm(self.clips.clips(r)).la for r in rows.split(512)])

    def _clone_step(self, opt: torch.optim.Optimizer, gen: torch.Generator, batch: int) -> float:
        """One step of :math:`\\|\\pi(o_t) - la\\|^2` on video clips (labels from
        :meth:`_relabel`)."""
        rows, clip = self.clips.sample(batch, gen)
        loss = F.mse_loss(self.policy(clip[:, 1]), self.labels[rows])
        opt.zero_grad()
        loss.backward()
        opt.step()
        return float(loss.detach())

    # ---- online --------------------------------------------------------------------------
    def _stepper(self, env: Any, owner: str) -> Stepper:
        return checked_stepper(env, self.obs_shape, self.action_space, owner)

    def online(
        self,
        env: gym.Env | gym.vector.VectorEnv,
        budget_steps: int,
        *,
        eval_env: gym.Env | str | None = None,
        eval_at: tuple[int, ...] = (),
        eval_episodes: int = 100,
        log: list | None = None,
    ) -> list[EvalPoint]:
        """Stage 2 (module docstring) for ``budget_steps`` reward-free interactions with ``env``
        (an Env, or a VectorEnv from :func:`bcvlr.make_vector_env`). With ``eval_env``, the
        policy is evaluated over ``eval_episodes`` episodes at each budget in ``eval_at``."""
        owner = f"{self.owner}.online"
        budget = check_int("budget_steps", owner, budget_steps, low=1, high=10_000_000)
        stepper = self._stepper(env, owner)
        check_int("eval_episodes", owner, eval_episodes, low=1, high=100_000)
        if self.clips is None:
            raise RuntimeError("BCVLR.online needs the videos: call pretrain(videos) first")
        if self._online_opts is None:
            cfg = self.config
            self.fm.requires_grad_(False)  # the forward model only passes gradient to the IDM
            self._online_opts = (
                torch.optim.Adam(self.idm.trainable(), lr=cfg.idm_lr),
                torch.optim.Adam(self.decoder.parameters(), lr=cfg.decoder_lr),
                torch.optim.Adam(self.policy.trainable(), lr=cfg.policy_lr),
            )
        evaluate = None
        if eval_env is not None:
            evaluate = lambda: self.evaluate(eval_env, eval_episodes, full=True)  # noqa: E731
        with torch.random.fork_rng():
            torch.manual_seed(self.seed + 1)
            return run_online(
                self,
                stepper,
                budget,
                seed=self.seed + 1,
                evaluate=evaluate,
                eval_at=eval_at,
                log=log,
            )

    def _action_loss(self, out: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        if self.discrete:
            return F.cross_entropy(out, actions)
        return F.mse_loss(out, actions)

    def update(self, buffer, generator: torch.Generator) -> dict[str, float]:
        """Steps (i) and (ii) of an online iteration; returns the last losses."""
        cfg = self.config
        clock = time.process_time()
        idm_opt, dec_opt, pol_opt = self._online_opts
        self.idm.train()
        batch = min(cfg.online_batch, len(buffer))
        for _ in range(cfg.idm_updates):
            clip, actions = buffer.sample(batch, generator)
            out = self.idm(clip)
            align = self._action_loss(self.decoder(out.la), actions)
            world = self.fm.loss(clip, out.la_q) + out.vq_loss
            loss = align + cfg.wm_loss_alpha * world
            idm_opt.zero_grad()
            dec_opt.zero_grad()
            loss.backward()
            idm_opt.step()
            dec_opt.step()
        if cfg.decoder_updates:
            self._fit_decoder(buffer, generator, batch)
        self._relabel()
        for _ in range(cfg.policy_updates):
            bc = self._clone_step(pol_opt, generator, cfg.policy_batch)
        return {
            "align": float(align.detach()),
            "world": float(world.detach()),
            "clone": bc,
            "cpu_s": time.process_time() - clock,
        }

    def _fit_decoder(self, buffer, generator: torch.Generator, batch: int) -> None:
        """``decoder_updates`` steps of :math:`\\mathrm{CE}(h(la), a_t)` with the IDM fixed: the
        latent actions of every buffered clip are computed once (an option; 0 in both presets)."""
        self.idm.eval()
        n = len(buffer)
        with torch.no_grad():
            clips, actions = buffer.take(torch.arange(n))
            la = torch.cat([self.idm(c).la for c in clips.split(512)])
        dec_opt = self._online_opts[1]
        for _ in range(self.config.decoder_updates):
            rows = torch.randint(0, n, (batch,), generator=generator)
            loss = self._action_loss(self.decoder(la[rows]), actions[rows])
            dec_opt.zero_grad()
            loss.backward()
            dec_opt.step()
        self.idm.train()

    # ---- acting --------------------------------------------------------------------------
    def act_frames(
        self,
        frames: torch.Tensor,
        generator: torch.Generator | None = None,
        deterministic: bool = False,
    ) -> np.ndarray:
        """Actions for frames (B, 3, H, W): :math:`a \\sim \\mathrm{Cat}(h(\\pi(o)))`, or the
        argmax when ``deterministic`` (box actions: :math:`h(\\pi(o))` clipped)."""
        with torch.no_grad():
            return sample_actions(
                self.decoder(self.policy(frames)), self.discrete, generator, deterministic
            )

    def act(self, obs: np.ndarray) -> np.ndarray:
        """The greedy action for one image (H, W, 3) or a batch (B, H, W, 3) (uint8 0-255).
        NaN policy: refused."""
        H, W = self.obs_shape[1:]
        obs = check_array("obs", f"{self.owner}.act", obs, ndim=(3, 4))
        if obs.shape[-3:] != (H, W, 3):
            raise param_error(
                "obs", f"{self.owner}.act", f"images of shape (..., {H}, {W}, 3)", describe(obs)
            )
        single = obs.ndim == 3
        actions = self.act_frames(to_frames(obs[None] if single else obs), deterministic=True)
        return actions[0] if single else actions

    def evaluate(
        self,
        env: gym.Env | str,
        episodes: int = 100,
        *,
        full: bool = False,
        deterministic: bool = False,
    ):
        """Mean return over ``episodes`` episodes of ``env`` (an Env or an env id) of the acting
        policy :math:`a \\sim \\mathrm{Cat}(h(\\pi(o)))` (as the official code scores its
        episodes; a seeded draw), or of the greedy one when ``deterministic``; ``full=True``
        returns the :class:`bcvlr.EvalResult` (success rate too)."""
        episodes = check_int("episodes", f"{self.owner}.evaluate", episodes, low=1, high=100_000)
        if not isinstance(env, (gym.Env, str)):
            raise param_error(
                "env",
                f"{self.owner}.evaluate",
                "a gymnasium Env or an env id",
                describe(env),
                cls=TypeError,
            )
        gen = torch.Generator().manual_seed(self.seed + 2)
        result = evaluate_policy(
            lambda f: self.act_frames(f, gen, deterministic=deterministic), env, episodes
        )
        return result if full else result.mean_return


class LAPO(BCVLR):
    """The LAPO-style ablation: BCV-LR without the self-supervised stage 1a (the shared
    encoder keeps its random initialisation), the same latent action model, latent policy and
    online alignment (Schmidt & Jiang, 2024, with BCV-LR's stage 2)."""

    owner = "LAPO"

    def _configure(self, config: BCVLRConfig) -> BCVLRConfig:
        return config.replace(ssl_steps=0)
