"""LoRA fine-tuning by GradSPO, SPO or Diffusion-DPO (the paper's training loop).

Per prompt batch: collect pairs without gradients (:func:`collect_stepwise_pairs`), then one
AdamW step per minibatch of stored tuples (gradient-norm clipping), each followed by the EMA
update ema ← d·ema + (1 − d)·θ. The noise-reduction mechanisms are switches: ``K`` candidates,
``use_ema`` (EMA sampler and target anchor; off: the current model samples and anchors),
``clip`` (None: no ratio clipping), ``gap_threshold``.

- ``method="gradspo"``: EMA sampler, :func:`gradspo_loss` with the EMA anchor.
- ``method="spo"``: the current model samples (as in SPO), :func:`spo_loss` on the candidates.
- ``method="dpo"``: K whole chains per prompt from the current model, the best and worst final
  samples form a pair, noised at (steps − start_step) random timesteps each (the same number of
  tuples as a stepwise collection), :func:`diffusion_dpo_loss` on the conditional ε.
"""

from __future__ import annotations

import copy
import time

import torch
from torch import nn

from gradspo.collect import PairBatch, collect_stepwise_pairs
from gradspo.lora import add_lora
from gradspo.losses import diffusion_dpo_loss, gradspo_loss, spo_loss
from gradspo.sampling import RewardFn, cfg_eps, sample
from gradspo.scheduler import DDIMScheduler
from paperkit import (
    check_bool,
    check_callable,
    check_choice,
    check_int,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = ["GradSPOTrainer", "ema_update"]

METHODS = ("gradspo", "spo", "dpo")


@torch.no_grad()
def ema_update(ema: nn.Module, model: nn.Module, decay: float) -> None:
    """ema_p ← decay·ema_p + (1 − decay)·p for every parameter (matched by name).

    NaN policy: not applicable (module arguments).
    """
    if not isinstance(ema, nn.Module):
        raise param_error("ema", "ema_update", "an nn.Module", describe(ema), cls=TypeError)
    if not isinstance(model, nn.Module):
        raise param_error("model", "ema_update", "an nn.Module", describe(model), cls=TypeError)
    decay = check_real("decay", "ema_update", decay, low=0, high=1)
    params = dict(model.named_parameters())
    for name, p in ema.named_parameters():
        p.mul_(decay).add_(params[name], alpha=1 - decay)


class GradSPOTrainer:
    """Fine-tune an ε-predictor toward ``reward_fn`` with GradSPO (or the SPO / DPO baselines).

    ``model`` is adapted in place (LoRA of rank ``lora_rank`` on its linear layers, only LoRA
    trainable; ``None``: full fine-tuning). ``ref`` is the frozen reference (default: a copy of
    ``model`` before adaptation). The paper's defaults: lr 6e-5, EMA 0.9, K = 4, β = 10,
    ε_c = 0.1, γ = 0.5, 20 steps from ``start_step`` 4, CFG 5, AdamW (0.9, 0.999, wd 1e-4),
    grad-norm clip 1. NaN policy: refused in every tensor argument (ValueError).

    >>> import torch
    >>> from gradspo import DDIMScheduler
    >>> from gradspo.toy import MLPDenoiser, directional
    >>> trainer = GradSPOTrainer(MLPDenoiser(hidden=16), None, directional(), DDIMScheduler(),
    ...                          steps=5, start_step=1, batch_size=4)
    >>> hist = trainer.train(torch.arange(4), epochs=1)
    >>> sorted(hist)
    ['grad_norm', 'loss', 'pairs', 'reward', 'reward_seconds', 'seconds']
    """

    def __init__(
        self,
        model: nn.Module,
        ref: nn.Module | None,
        reward_fn: RewardFn,
        scheduler: DDIMScheduler,
        lr: float = 6e-5,
        ema_decay: float = 0.9,
        lora_rank: int | None = 4,
        K: int = 4,
        method: str = "gradspo",
        *,
        beta: float = 10.0,
        clip: float | None = 0.1,
        gamma: float = 0.5,
        dpo_beta: float = 5000.0,
        steps: int = 20,
        start_step: int = 4,
        cfg_scale: float = 5.0,
        gap_threshold: float = 0.0,
        use_ema: bool = True,
        batch_size: int = 10,
        train_batch_size: int = 10,
        max_grad_norm: float = 1.0,
        weight_decay: float = 1e-4,
        dim: int | None = None,
        seed: int = 0,
    ) -> None:
        owner = "GradSPOTrainer"
        if not isinstance(model, nn.Module):
            raise param_error("model", owner, "an nn.Module", describe(model), cls=TypeError)
        if ref is not None and not isinstance(ref, nn.Module):
            raise param_error("ref", owner, "an nn.Module or None", describe(ref), cls=TypeError)
        self.reward_fn = check_callable("reward_fn", owner, reward_fn)
        if not isinstance(scheduler, DDIMScheduler):
            raise param_error(
                "scheduler", owner, "a gradspo.DDIMScheduler", describe(scheduler), cls=TypeError
            )
        self.scheduler = scheduler
        lr = check_real("lr", owner, lr, low=0, low_open=True)
        self.ema_decay = check_real("ema_decay", owner, ema_decay, low=0, high=1, high_open=True)
        if lora_rank is not None:
            sizes = [
                min(m.in_features, m.out_features)
                for m in model.modules()
                if isinstance(m, nn.Linear)
            ]
            lora_rank = check_int("lora_rank", owner, lora_rank, low=1, high=max(sizes, default=0))
        self.K = check_int("K", owner, K, low=2, high=10**4)
        self.method = check_choice("method", owner, method, METHODS)
        self.beta = check_real("beta", owner, beta, low=0, low_open=True)
        if clip is not None:
            clip = check_real("clip", owner, clip, low=0, high=1, low_open=True, high_open=True)
        self.clip = clip
        self.gamma = check_real("gamma", owner, gamma, low=0)
        self.dpo_beta = check_real("dpo_beta", owner, dpo_beta, low=0, low_open=True)
        self.steps = check_int("steps", owner, steps, low=1, high=scheduler.num_train_steps)
        self.start_step = check_int("start_step", owner, start_step, low=0, high=self.steps - 1)
        self.cfg_scale = check_real("cfg_scale", owner, cfg_scale, low=0)
        self.gap_threshold = check_real("gap_threshold", owner, gap_threshold, low=0)
        self.use_ema = check_bool("use_ema", owner, use_ema)
        self.batch_size = check_int("batch_size", owner, batch_size, low=1, high=10**6)
        self.train_batch_size = check_int(
            "train_batch_size", owner, train_batch_size, low=1, high=10**6
        )
        self.max_grad_norm = check_real("max_grad_norm", owner, max_grad_norm, low=0, low_open=True)
        weight_decay = check_real("weight_decay", owner, weight_decay, low=0)
        self.dim = dim if dim is not None else getattr(model, "dim", None)
        self.dim = check_int("dim", owner, self.dim, low=1, high=10**6)
        seed = check_int("seed", owner, seed, low=0)
        self.ref = (copy.deepcopy(model) if ref is None else ref).requires_grad_(False).eval()
        if lora_rank is not None:
            self.params = add_lora(model, lora_rank)
        else:
            self.params = list(model.requires_grad_(True).parameters())
        self.model = model.eval()
        self.ema = copy.deepcopy(model).requires_grad_(False).eval()
        self.optimizer = torch.optim.AdamW(
            self.params, lr=lr, betas=(0.9, 0.999), weight_decay=weight_decay, eps=1e-8
        )
        self.generator = torch.Generator().manual_seed(seed)

    # -- one prompt batch -------------------------------------------------------------------
    def _update(self, loss: torch.Tensor, history: dict) -> None:
        self.optimizer.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.params, self.max_grad_norm)
        self.optimizer.step()
        ema_update(self.ema, self.model, self.ema_decay)
        history["loss"].append(float(loss.detach()))
        history["grad_norm"].append(float(norm))

    def _eps(self, model: nn.Module, x, t, cond, cfg: float | None = None) -> torch.Tensor:
        return cfg_eps(model, x, t, cond, self.cfg_scale if cfg is None else cfg)

    def _stepwise(self, cond: torch.Tensor, history: dict) -> None:
        sampler = self.ema if (self.method == "gradspo" and self.use_ema) else self.model
        pairs = collect_stepwise_pairs(
            sampler,
            self.scheduler,
            cond,
            self.reward_fn,
            K=self.K,
            steps=self.steps,
            start_step=self.start_step,
            cfg_scale=self.cfg_scale,
            gap_threshold=self.gap_threshold,
            dim=self.dim,
            generator=self.generator,
        )
        history["reward"].append(float(pairs.final_reward.mean()))
        history["pairs"].append(len(pairs))
        history["reward_seconds"].append(pairs.reward_seconds)
        order = torch.randperm(len(pairs), generator=self.generator)
        for start in range(0, len(pairs), self.train_batch_size):
            self._update(
                self.stepwise_loss(pairs, order[start : start + self.train_batch_size]), history
            )

    def stepwise_loss(self, pairs: PairBatch, idx: torch.Tensor) -> torch.Tensor:
        """The GradSPO or SPO loss on the stored tuples ``pairs[idx]`` (a :class:`PairBatch`)."""
        x, t, c = pairs.x_t[idx], pairs.t[idx], pairs.cond[idx]
        eps_theta = self._eps(self.model, x, t, c)
        with torch.no_grad():
            eps_ref = self._eps(self.ref, x, t, c)
        if self.method == "gradspo":
            with torch.no_grad():
                anchor = self._eps(self.ema, x, t, c) if self.use_ema else eps_theta.detach()
            abar = self.scheduler.alpha_bar(t).to(x.dtype)
            return gradspo_loss(
                eps_theta, eps_ref, anchor, pairs.g[idx], abar, self.beta, self.clip, self.gamma
            )
        zero = torch.zeros_like(x)
        _, mu_theta, sigma, _ = self.scheduler.step(eps_theta, t, x, 1.0, noise=zero)
        _, mu_ref, _, _ = self.scheduler.step(eps_ref, t, x, 1.0, noise=zero)
        return spo_loss(
            mu_theta, mu_ref, pairs.x_win[idx], pairs.x_lose[idx], sigma, self.beta, self.clip
        )

    def _final_pairs(self, cond: torch.Tensor, history: dict) -> None:
        B, K = cond.shape[0], self.K
        x0 = sample(
            self.model,
            self.scheduler,
            cond.repeat(K),
            self.steps,
            self.cfg_scale,
            dim=self.dim,
            generator=self.generator,
        )
        tic = time.perf_counter()
        r = self.reward_fn(x0, 0, cond.repeat(K)).reshape(K, B)
        history["reward_seconds"].append(time.perf_counter() - tic)
        ar = torch.arange(B)
        x0 = x0.reshape(K, B, -1)
        keep = (r.max(0).values - r.min(0).values) > self.gap_threshold
        x_w, x_l = x0[r.argmax(0), ar][keep], x0[r.argmin(0), ar][keep]
        c = cond[keep]
        history["reward"].append(
            float(r[torch.randint(0, K, (B,), generator=self.generator), ar].mean())
        )
        repeats = self.steps - self.start_step
        x_w, x_l, c = x_w.repeat(repeats, 1), x_l.repeat(repeats, 1), c.repeat(repeats)
        history["pairs"].append(int(c.shape[0]))
        order = torch.randperm(c.shape[0], generator=self.generator)
        for start in range(0, c.shape[0], self.train_batch_size):
            idx = order[start : start + self.train_batch_size]
            self._update(self.dpo_loss(x_w[idx], x_l[idx], c[idx]), history)

    def dpo_loss(self, x_w: torch.Tensor, x_l: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """Diffusion-DPO on final samples ``x_w``, ``x_l`` noised at one random t (shared noise)."""
        n = c.shape[0]
        t = torch.randint(0, self.scheduler.num_train_steps, (n,), generator=self.generator)
        noise = torch.randn(n, self.dim, generator=self.generator, dtype=x_w.dtype)
        a = self.scheduler.alphas_cumprod.to(x_w.dtype)[t][:, None]
        both = torch.cat(
            [a.sqrt() * x_w + (1 - a).sqrt() * noise, a.sqrt() * x_l + (1 - a).sqrt() * noise]
        )
        tt, cc = torch.cat([t, t]), torch.cat([c, c])
        e_theta = self.model(both, tt, cc).chunk(2)
        with torch.no_grad():
            e_ref = self.ref(both, tt, cc).chunk(2)
        return diffusion_dpo_loss(
            e_theta[0], e_theta[1], e_ref[0], e_ref[1], noise, noise, self.dpo_beta
        )

    def train(self, conds: torch.Tensor, epochs: int = 1) -> dict[str, list[float]]:
        """Run ``epochs`` passes over the prompts ``conds`` (LongTensor ``[N]``) in batches of
        ``batch_size``. Returns the history: per update ``loss`` and ``grad_norm`` (before
        clipping); per prompt batch ``reward`` (mean final reward of the sampled chains),
        ``pairs``, ``reward_seconds`` and ``seconds``. NaN policy: not applicable (labels).
        """
        owner = "GradSPOTrainer.train"
        check_tensor("conds", owner, conds, shape=("N",), dtype="int")
        if bool((conds < 0).any()):
            raise param_error("conds", owner, "non-negative class labels", describe(conds))
        epochs = check_int("epochs", owner, epochs, low=1, high=10**6)
        history: dict[str, list[float]] = {
            k: [] for k in ("loss", "grad_norm", "reward", "pairs", "reward_seconds", "seconds")
        }
        for _ in range(epochs):
            perm = conds[torch.randperm(conds.shape[0], generator=self.generator)]
            for start in range(0, perm.shape[0], self.batch_size):
                tic = time.perf_counter()
                cond = perm[start : start + self.batch_size]
                if self.method == "dpo":
                    self._final_pairs(cond, history)
                else:
                    self._stepwise(cond, history)
                history["seconds"].append(time.perf_counter() - tic)
        return history
