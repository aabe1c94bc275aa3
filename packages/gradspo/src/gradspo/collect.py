"""Stepwise preference pairs: the data collection of GradSPO (and SPO).

Per prompt batch, with the sampler ε (the EMA model in GradSPO) and S DDIM steps (eta = 1):

1. Steps i < ``start_step`` are plain sampling. From step i ≥ ``start_step``, at x_t draw K
   candidates x_p^(j) = μ_t + σ_t z_j, z_j ~ N(0, I), all K in one batched forward.
2. Score each with the step-aware reward r(x̂0(x_p^(j)), t_p), x̂0 from the sampler's ε at the
   next step (at the last step, the final sample itself). j₊ = argmax, j₋ = argmin; the pair is
   kept when r(j₊) − r(j₋) > ``gap_threshold`` (always at the last step).
3. The guidance estimate g_t = (z_{j₊} − z_{j₋}) / 2 is stored with (x_t, t, c).
4. The chain continues from a uniformly random candidate (its next-step ε is reused).

Steps with σ_t = 0 (the last step when ᾱ after it is 1) give identical candidates and no pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from gradspo.sampling import Denoiser, RewardFn, cfg_eps, check_sampler_args, model_dim
from gradspo.scheduler import DDIMScheduler
from paperkit import check_callable, check_int, check_real, describe, param_error

__all__ = ["PairBatch", "collect_stepwise_pairs"]


@dataclass
class PairBatch:
    """The stored tuples of one collection (M pairs, D dims).

    x_t, g, z_win, z_lose, x_win, x_lose: ``[M, D]``; t, cond, step: ``[M]`` (long);
    sigma, gap: ``[M]``; rewards: the K candidates' scores ``[M, K]``. ``final`` and
    ``final_reward``: the B final samples ``[B, D]`` and
    their rewards ``[B]``; ``n_reward_calls``: candidates scored. NaN policy: not applicable (a
    record of outputs; its producer refuses non-finite rewards).
    """

    x_t: torch.Tensor
    t: torch.Tensor
    cond: torch.Tensor
    g: torch.Tensor
    z_win: torch.Tensor
    z_lose: torch.Tensor
    x_win: torch.Tensor
    x_lose: torch.Tensor
    sigma: torch.Tensor
    gap: torch.Tensor
    step: torch.Tensor
    rewards: torch.Tensor
    final: torch.Tensor
    final_reward: torch.Tensor
    n_reward_calls: int = 0
    reward_seconds: float = field(default=0.0, repr=False)

    def __len__(self) -> int:
        return int(self.x_t.shape[0])


def _score(reward_fn: RewardFn, x: torch.Tensor, t: int, cond: torch.Tensor) -> torch.Tensor:
    r = reward_fn(x, t, cond)
    if not isinstance(r, torch.Tensor) or r.shape != (x.shape[0],):
        raise param_error(
            "reward_fn",
            "collect_stepwise_pairs",
            f"a callable returning a tensor of shape ({x.shape[0]},)",
            describe(r),
            cls=TypeError,
        )
    if not bool(torch.isfinite(r).all()):
        raise param_error(
            "reward_fn",
            "collect_stepwise_pairs",
            "a callable returning finite rewards",
            describe(r),
        )
    return r


@torch.no_grad()
def collect_stepwise_pairs(
    model_ema: Denoiser,
    scheduler: DDIMScheduler,
    cond: torch.Tensor,
    reward_fn: RewardFn,
    K: int = 4,
    steps: int = 20,
    start_step: int = 4,
    cfg_scale: float = 5.0,
    gap_threshold: float = 0.0,
    eta: float = 1.0,
    dim: int | None = None,
    generator: torch.Generator | None = None,
) -> PairBatch:
    """Sample B = len(cond) chains with ``model_ema`` and collect stepwise best/worst pairs.

    ``reward_fn(x [N, D], t: int, cond [N]) -> [N]`` scores x̂0 at timestep t. ``dim``: D
    (default ``model_ema.dim``). Deterministic under ``generator``. NaN policy: NaN in ``cond``
    cannot occur (integer labels); non-finite rewards are refused with a ValueError.

    >>> import torch
    >>> from gradspo import DDIMScheduler
    >>> s = DDIMScheduler(set_alpha_to_one=False)
    >>> model = lambda x, t, c: 0.1 * x
    >>> reward = lambda x, t, c: -x.norm(dim=1)
    >>> pairs = collect_stepwise_pairs(model, s, torch.zeros(5, dtype=torch.long), reward, K=3,
    ...                                steps=6, start_step=2, dim=2)
    >>> len(pairs), pairs.g.shape
    (15, torch.Size([15, 2]))
    """
    import time

    owner = "collect_stepwise_pairs"
    steps, cfg_scale = check_sampler_args(owner, model_ema, scheduler, cond, steps, cfg_scale)
    check_callable("reward_fn", owner, reward_fn)
    K = check_int("K", owner, K, low=2, high=10**4)
    start_step = check_int("start_step", owner, start_step, low=0, high=steps - 1)
    gap_threshold = check_real("gap_threshold", owner, gap_threshold, low=0)
    eta = check_real("eta", owner, eta, low=0)
    dim = model_dim(owner, model_ema, dim)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator", owner, "a torch.Generator or None", describe(generator), cls=TypeError
        )
    B = cond.shape[0]
    scheduler.set_timesteps(steps)
    ts = scheduler.timesteps.tolist()
    x = torch.randn(B, dim, generator=generator)
    eps = cfg_eps(model_ema, x, torch.full_like(cond, ts[0]), cond, cfg_scale)
    cond_k = cond.repeat(K)
    rows: dict[str, list[torch.Tensor]] = {k: [] for k in PairBatch.__dataclass_fields__}
    arange = torch.arange(B)
    calls, reward_s = 0, 0.0
    final_r = None
    for i, t in enumerate(ts):
        last = i == len(ts) - 1
        _, mu, sigma, _ = scheduler.step(eps, t, x, eta, noise=torch.zeros_like(x))
        if i < start_step or float(sigma[0]) == 0.0:
            z = torch.randn(x.shape, generator=generator)
            x_next = mu + sigma[:, None] * z
            eps = (
                None
                if last
                else cfg_eps(model_ema, x_next, torch.full_like(cond, ts[i + 1]), cond, cfg_scale)
            )
            x = x_next
            continue
        z = torch.randn(K, B, dim, generator=generator)
        cand = (mu[None] + sigma[None, :, None] * z).reshape(K * B, dim)
        if last:
            scored, eps_next, t_p = cand, None, 0
        else:
            t_p = ts[i + 1]
            eps_next = cfg_eps(model_ema, cand, torch.full_like(cond_k, t_p), cond_k, cfg_scale)
            a_p = float(scheduler.alpha_bar(torch.tensor(t_p)))
            scored = (cand - (1 - a_p) ** 0.5 * eps_next) / a_p**0.5
        tic = time.perf_counter()
        r = _score(reward_fn, scored, t_p, cond_k).reshape(K, B)
        reward_s += time.perf_counter() - tic
        calls += K * B
        best, worst = r.argmax(0), r.argmin(0)
        gap = r[best, arange] - r[worst, arange]
        keep = (gap > gap_threshold) | last
        z_w, z_l = z[best, arange], z[worst, arange]
        cand3 = cand.reshape(K, B, dim)
        for name, value in (
            ("x_t", x),
            ("t", torch.full_like(cond, t)),
            ("cond", cond),
            ("g", (z_w - z_l) / 2),
            ("z_win", z_w),
            ("z_lose", z_l),
            ("x_win", cand3[best, arange]),
            ("x_lose", cand3[worst, arange]),
            ("sigma", sigma),
            ("gap", gap),
            ("step", torch.full_like(cond, i)),
            ("rewards", r.T),
        ):
            rows[name].append(value[keep])
        pick = torch.randint(0, K, (B,), generator=generator)
        x = cand3[pick, arange]
        if last:
            final_r = r[pick, arange]
        else:
            eps = eps_next.reshape(K, B, dim)[pick, arange]
    if final_r is None:  # the last step had σ = 0: score the final samples once
        final_r = _score(reward_fn, x, 0, cond)
    out = {k: torch.cat(v) for k, v in rows.items() if v}
    empty = torch.empty(0, dim)
    return PairBatch(
        x_t=out.get("x_t", empty),
        t=out.get("t", torch.empty(0, dtype=torch.long)),
        cond=out.get("cond", torch.empty(0, dtype=torch.long)),
        g=out.get("g", empty),
        z_win=out.get("z_win", empty),
        z_lose=out.get("z_lose", empty),
        x_win=out.get("x_win", empty),
        x_lose=out.get("x_lose", empty),
        sigma=out.get("sigma", torch.empty(0)),
        gap=out.get("gap", torch.empty(0)),
        step=out.get("step", torch.empty(0, dtype=torch.long)),
        rewards=out.get("rewards", torch.empty(0, K)),
        final=x,
        final_reward=final_r,
        n_reward_calls=calls,
        reward_seconds=reward_s,
    )
