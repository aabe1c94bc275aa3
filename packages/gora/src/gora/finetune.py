"""Pre-training and the fine-tuning methods compared in the reproduction and the benchmark.

Every method fine-tunes the same pre-trained :class:`~gora.model.DigitsEncoder` with a new
classification head (same initial head per seed) on the downstream task:

- ``"linear probe"``: the head only; ``"full FT"``: every parameter.
- ``"LoRA"`` (scale ``alpha / r``), ``"rsLoRA"`` (``alpha / sqrt(r)``), ``"PiSSA"`` (peft's
  ``init_lora_weights="pissa"``: principal singular pairs of W in the adapter, W replaced by its
  residual), ``"AdaLoRA"`` (peft's SVD-form adapter pruned from ``1.5 r0`` to an average ``r0``
  during training, with the orthogonal regulariser ``||P^T P - I||_F + ||Q Q^T - I||_F``).
- ``"GoRA"`` (:func:`gora.plan_gora` + peft), and the two ablations ``"GoRA ranks + zero B"``
  (allocated ranks, plain LoRA init) and ``"uniform ranks + GoRA init"``.

Adapters sit on every block's ``q, k, v, o, fc1, fc2`` with reference rank ``r0`` (4) and alpha
(8), so every LoRA-type method has the trainable budget ``sum r0 (m + n)`` (+ the head);
AdaLoRA starts above it (``1.5 r0``) as in its paper. Optimiser: AdamW with cosine decay.
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from gora.data import DigitsTasks
from gora.model import TARGETS, DigitsEncoder
from gora.pipeline import apply_plan, plan_gora
from paperkit import check_choice

__all__ = [
    "METHODS",
    "build_method",
    "cross_entropy_loss",
    "evaluate",
    "finetune",
    "pretrain",
    "train_epochs",
]

METHODS = (
    "linear probe",
    "LoRA",
    "rsLoRA",
    "AdaLoRA",
    "PiSSA",
    "GoRA",
    "GoRA ranks + zero B",
    "uniform ranks + GoRA init",
    "full FT",
)
_GORA: dict[str, dict[str, Any]] = {
    "GoRA": {},
    "GoRA ranks + zero B": {"init": "lora"},
    "uniform ranks + GoRA init": {"allocate": False},
}


def cross_entropy_loss(model: nn.Module, batch: tuple[Tensor, Tensor]) -> Tensor:
    """``loss_fn`` of the digits tasks: cross-entropy of ``model(x)`` against ``y``."""
    x, y = batch
    return F.cross_entropy(model(x), y)


def _batches(X: Tensor, y: Tensor, size: int, gen: torch.Generator) -> list[tuple[Tensor, Tensor]]:
    order = torch.randperm(len(X), generator=gen)
    return [(X[i], y[i]) for i in order.split(size)]


@torch.no_grad()
def evaluate(model: nn.Module, X: Tensor, y: Tensor) -> float:
    """Accuracy of ``model`` on ``(X, y)`` (in eval mode)."""
    model.eval()
    return float((model(X).argmax(-1) == y).float().mean())


def _orth_reg(model: nn.Module) -> Tensor:
    terms = []
    for name, p in model.named_parameters():
        if p.requires_grad and ("lora_A" in name or "lora_B" in name):
            cov = p @ p.T if "lora_A" in name else p.T @ p
            terms.append(torch.linalg.matrix_norm(cov - torch.eye(len(cov))))
    return torch.stack(terms).mean()


def train_epochs(
    model: nn.Module,
    X: Tensor,
    y: Tensor,
    *,
    epochs: int,
    lr: float,
    seed: int,
    batch: int = 32,
    adalora: bool = False,
    loraplus_ratio: float = 1.0,
) -> float:
    """AdamW (cosine decay to 0) on the trainable parameters; returns the wall time in s.

    ``adalora``: add AdaLoRA's orthogonal regulariser (weight 0.5, peft's default) and call the
    peft model's ``update_and_allocate`` after every step. ``loraplus_ratio``: LoRA+ (the GoRA
    scripts' option), the ``B`` factors (``lora_B`` / ``GoRALinear.B``) train with
    ``lr * loraplus_ratio``.
    """
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    is_b = ["lora_B" in n or n == "B" or n.endswith(".B") for n, _ in named]
    groups = [
        {"params": [p for (_, p), b in zip(named, is_b, strict=True) if not b], "lr": lr},
        {
            "params": [p for (_, p), b in zip(named, is_b, strict=True) if b],
            "lr": lr * loraplus_ratio,
        },
    ]
    steps = epochs * math.ceil(len(X) / batch)
    opt = torch.optim.AdamW([g for g in groups if g["params"]], weight_decay=0.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    gen = torch.Generator().manual_seed(seed)
    model.train()
    start = time.perf_counter()
    step = 0
    for _ in range(epochs):
        for xb, yb in _batches(X, y, batch, gen):
            loss = cross_entropy_loss(model, (xb, yb))
            if adalora:
                loss = loss + 0.5 * _orth_reg(model)
            loss.backward()
            opt.step()
            if adalora:
                model.base_model.update_and_allocate(step)
            opt.zero_grad(set_to_none=True)
            sched.step()
            step += 1
    return time.perf_counter() - start


def pretrain(
    tasks: DigitsTasks, *, seed: int = 0, epochs: int = 30, lr: float = 2e-3
) -> tuple[dict[str, Tensor], dict[str, float]]:
    """Train a :class:`DigitsEncoder` from scratch on the digits 0-4; return its state_dict and
    ``{"time_s", "train_accuracy"}``."""
    torch.manual_seed(seed)
    model = DigitsEncoder(n_classes=5)
    wall = train_epochs(model, tasks.X_pre, tasks.y_pre, epochs=epochs, lr=lr, seed=seed, batch=64)
    info = {"time_s": wall, "train_accuracy": evaluate(model, tasks.X_pre, tasks.y_pre)}
    return model.state_dict(), info


def build_method(
    method: str,
    pretrained: dict[str, Tensor],
    tasks: DigitsTasks,
    *,
    seed: int,
    epochs: int,
    r0: int = 4,
    alpha: float = 8.0,
    n_grad_batches: int = 8,
    gamma: float = 5e-2,
    batch: int = 32,
) -> tuple[nn.Module, dict[str, Any]]:
    """The model ready to fine-tune with ``method``, and facts about it (ranks, timings)."""
    from peft import AdaLoraConfig, LoraConfig, get_peft_model

    check_choice("method", "build_method", method, METHODS)
    torch.manual_seed(seed)  # the new head: the same for every method of a seed
    model = DigitsEncoder(n_classes=5)
    model.load_state_dict({k: v for k, v in pretrained.items() if not k.startswith("head.")}, False)
    info: dict[str, Any] = {}
    lora = {"r": r0, "lora_alpha": alpha, "target_modules": TARGETS, "modules_to_save": ["head"]}
    if method == "full FT":
        return model, info
    if method == "linear probe":
        for name, p in model.named_parameters():
            p.requires_grad_(name.startswith("head."))
        return model, info
    if method in ("LoRA", "rsLoRA", "PiSSA"):
        init = "pissa" if method == "PiSSA" else True
        config = LoraConfig(**lora, use_rslora=method == "rsLoRA", init_lora_weights=init)
        return get_peft_model(model, config), info
    if method == "AdaLoRA":
        total = epochs * math.ceil(len(tasks.X_train) / batch)
        config = AdaLoraConfig(
            target_r=r0,
            init_r=math.ceil(1.5 * r0),
            tinit=total // 10,
            tfinal=total // 5,
            deltaT=max(1, total // 50),
            total_step=total,
            lora_alpha=alpha,
            target_modules=TARGETS,
            modules_to_save=["head"],
        )
        return get_peft_model(model, config), info
    gen = torch.Generator().manual_seed(seed + 1)
    grad_batches = _batches(tasks.X_train, tasks.y_train, batch, gen)
    plan = plan_gora(
        model,
        grad_batches,
        cross_entropy_loss,
        TARGETS,
        base_rank=r0,
        lora_alpha=alpha,
        n_steps=n_grad_batches,
        gamma=gamma,
        generator=torch.Generator().manual_seed(seed + 2),
        **_GORA[method],
    )
    info = {
        "ranks": plan.ranks,
        "grad_time_s": plan.grad_time_s,
        "init_time_s": plan.init_time_s,
        "n_grad_batches": plan.n_steps,
    }
    return apply_plan(model, plan, "peft", modules_to_save=["head"]), info


def finetune(
    method: str,
    pretrained: dict[str, Tensor],
    tasks: DigitsTasks,
    *,
    seed: int,
    epochs: int,
    lr: float | None = None,
    loraplus_ratio: float = 1.0,
    **method_kw: Any,
) -> dict[str, Any]:
    """Fine-tune with ``method`` and report test accuracy, trainable parameters and timings.

    ``lr`` defaults to 1e-2 for the linear probe, 1e-3 for full FT and 5e-3 for adapters;
    ``loraplus_ratio`` is LoRA+'s learning-rate ratio of B to A (see :func:`train_epochs`).
    """
    model, info = build_method(method, pretrained, tasks, seed=seed, epochs=epochs, **method_kw)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    default_lr = {"linear probe": 1e-2, "full FT": 1e-3}.get(method, 5e-3)
    wall = train_epochs(
        model,
        tasks.X_train,
        tasks.y_train,
        epochs=epochs,
        lr=lr or default_lr,
        seed=seed + 3,
        adalora=method == "AdaLoRA",
        loraplus_ratio=loraplus_ratio,
    )
    return {
        "method": method,
        "seed": seed,
        "test_accuracy": evaluate(model, tasks.X_test, tasks.y_test),
        "trainable": trainable,
        "train_time_s": wall,
        **info,
    }
