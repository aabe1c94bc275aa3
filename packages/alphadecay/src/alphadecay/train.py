"""Small-scale LM pre-training with each decay scheme (used by the reproduction and the bench).

Schemes: ``"WD=0"`` (AdamW without decay), ``"Uniform"`` (AdamW, one decay for every
parameter), ``"AWD"`` (:class:`~alphadecay.AWDAdamW`), ``"AdaDecay"``
(:class:`~alphadecay.AdaDecayAdamW`) and ``"AlphaDecay"`` (:class:`~alphadecay.AlphaDecayAdamW`),
all with the same learning-rate schedule (linear warm-up over 10% of the steps, then cosine to
zero) and the same data order for a given seed.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from alphadecay.assign import module_alphas
from alphadecay.baselines import AdaDecayAdamW, AWDAdamW
from alphadecay.data import ALPHABET
from alphadecay.model import tiny_llama
from alphadecay.optim import AlphaDecayAdamW
from paperkit import check_choice

__all__ = ["AWD_SCALE", "SCHEMES", "lm_loss", "make_optimizer", "sample_batch", "train_lm"]

SCHEMES = ("WD=0", "Uniform", "AWD", "AdaDecay", "AlphaDecay")
#: The official trainer multiplies the base decay by 100 for AWD (``lambda_awd = 100 * lam``).
AWD_SCALE = 100.0


def sample_batch(data: torch.Tensor, gen: torch.Generator, batch: int, ctx: int) -> torch.Tensor:
    """``batch`` random windows of ``ctx + 1`` tokens from ``data``."""
    starts = torch.randint(0, len(data) - ctx - 1, (batch,), generator=gen)
    return torch.stack([data[i : i + ctx + 1] for i in starts.tolist()])


def lm_loss(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy of windows ``x`` (B, T + 1) under a transformers causal LM."""
    return F.cross_entropy(model(x[:, :-1]).logits.flatten(0, 1), x[:, 1:].flatten())


def make_optimizer(
    scheme: str,
    model: torch.nn.Module,
    *,
    lr: float,
    base_wd: float,
    update_every: int,
    min_eigs: int,
) -> torch.optim.Optimizer:
    """The optimizer of ``scheme`` (one of :data:`SCHEMES`) for ``model``."""
    check_choice("scheme", "make_optimizer", scheme, SCHEMES)
    params = list(model.parameters())
    if scheme == "WD=0":
        return torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    if scheme == "Uniform":
        return torch.optim.AdamW(params, lr=lr, weight_decay=base_wd)
    if scheme == "AWD":
        return AWDAdamW(params, lr=lr, weight_decay=AWD_SCALE * base_wd)
    if scheme == "AdaDecay":
        return AdaDecayAdamW(params, lr=lr, weight_decay=base_wd)
    return AlphaDecayAdamW(
        model, lr=lr, weight_decay=base_wd, update_every=update_every, min_eigs=min_eigs
    )


def _type_means(alphas: dict[str, float]) -> dict[str, float]:
    out = {}
    for kind in ("self_attn", "mlp"):
        values = [a for n, a in alphas.items() if f".{kind}." in n]
        out["attn" if kind == "self_attn" else kind] = (
            float(np.mean(values)) if values else math.nan
        )
    return out


def train_lm(
    scheme: str,
    *,
    base_wd: float,
    steps: int,
    seed: int,
    train_data: torch.Tensor,
    val_batches: list[torch.Tensor],
    d: int = 64,
    n_layers: int = 2,
    n_heads: int = 4,
    ctx: int = 64,
    batch: int = 16,
    lr: float = 1e-3,
    update_every: int = 100,
    min_eigs: int = 8,
    eval_every: int = 100,
) -> dict[str, Any]:
    """Train one tiny ``LlamaForCausalLM`` from scratch; return held-out loss/perplexity, the
    module exponents at the end (all schemes measured on AlphaDecay's module set), curves and
    wall time."""
    torch.manual_seed(seed)
    model = tiny_llama(len(ALPHABET), d=d, n_layers=n_layers, n_heads=n_heads, ctx=ctx)
    opt = make_optimizer(
        scheme, model, lr=lr, base_wd=base_wd, update_every=update_every, min_eigs=min_eigs
    )
    warmup = max(1, steps // 10)

    def schedule(s: int) -> float:
        if s < warmup:
            return (s + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (s - warmup) / max(1, steps - warmup)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
    gen = torch.Generator().manual_seed(seed + 10_000)

    def evaluate() -> float:
        with torch.no_grad():
            return float(np.mean([lm_loss(model, x).item() for x in val_batches]))

    curve: list[tuple[int, float]] = []
    alpha_curve: list[tuple[int, float]] = []
    start = time.perf_counter()
    for step in range(steps):
        x = sample_batch(train_data, gen, batch, ctx)
        loss = lm_loss(model, x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if (step + 1) % eval_every == 0 or step + 1 == steps:
            curve.append((step + 1, evaluate()))
            alphas = module_alphas(model, min_eigs=min_eigs)
            alpha_curve.append((step + 1, float(np.std(list(alphas.values())))))
    wall = time.perf_counter() - start
    alphas = module_alphas(model, min_eigs=min_eigs)
    val_loss = curve[-1][1]
    return {
        "scheme": scheme,
        "base_wd": base_wd,
        "seed": seed,
        "val_loss": val_loss,
        "val_ppl": math.exp(val_loss),
        "alpha_std": float(np.std(list(alphas.values()))),
        "alpha_type_mean": _type_means(alphas),
        "alphas": alphas,
        "curve": curve,
        "alpha_std_curve": alpha_curve,
        "wall_s": wall,
    }
