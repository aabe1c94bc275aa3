"""Step 1 of GoRA: the gradient-accumulation pass before training.

All parameters are frozen except the weights ``W_i`` (out x in) of the target ``nn.Linear``
layers; ``N`` batches are run forward and backward, and the averaged gradient

    G_i = (1/N) * sum_{s=1..N} dL_s / dW_i

is kept per layer (on ``device``, e.g. the CPU to offload it). No optimizer step is taken and the
parameters' ``.grad`` fields are left untouched (gradients come from ``torch.autograd.grad``).

With ``adaptive=True``, ``n_steps`` is an upper bound: the pass stops once every layer's importance
``I_i = mean(|W_i * G_i|)`` (of the running mean) changed by less than ``tol`` relative to the
previous step, after at least ``min_steps`` steps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor, nn

from gora._checks import positive_int
from paperkit import Described, param_error

__all__ = ["collect_gradients", "find_targets"]


def find_targets(model: nn.Module, target_modules: list[str], owner: str) -> dict[str, nn.Linear]:
    """The ``nn.Linear`` modules named by ``target_modules``, keyed by their full names.

    A target matches a module whose full name equals it or ends with ``"." + target`` (peft's
    rule), so ``"q"`` selects every ``*.q``. Every target must match at least one module, and every
    matched module must be an ``nn.Linear``.
    """
    if isinstance(target_modules, str) or not isinstance(target_modules, (list, tuple)):
        raise param_error(
            "target_modules", owner, "a list of module names", target_modules, cls=TypeError
        )
    if not target_modules:
        raise param_error("target_modules", owner, "a non-empty list of module names", [])
    found: dict[str, nn.Linear] = {}
    for target in target_modules:
        hits = [
            (name, mod)
            for name, mod in model.named_modules()
            if name and (name == target or name.endswith("." + target))
        ]
        if not hits:
            raise param_error(
                "target_modules", owner, "names of modules in the model", Described(repr(target))
            )
        for name, mod in hits:
            if type(mod) is not nn.Linear:
                raise param_error(
                    "target_modules",
                    owner,
                    "names of nn.Linear modules",
                    Described(f"{name!r}, a {type(mod).__name__}"),
                )
            found[name] = mod
    return found


def _mean_abs_wg(W: Tensor, G: Tensor) -> float:
    return float((W.detach().to(G) * G).abs().mean())


def collect_gradients(
    model: nn.Module,
    batches: Iterable[Any],
    loss_fn: Callable[[nn.Module, Any], Tensor],
    target_modules: list[str],
    n_steps: int = 32,
    adaptive: bool = False,
    tol: float = 0.1,
    min_steps: int = 3,
    device: str | torch.device = "cpu",
) -> dict[str, Tensor]:
    """Average gradient ``G_i`` (out x in, float32) of every target weight over up to ``n_steps``
    batches.

    Args:
        model: the pretrained model (its mode, train or eval, is left as it is).
        batches: an iterable of batches; ``loss_fn(model, batch)`` returns the scalar loss.
        target_modules: module names (peft's matching rule, see :func:`find_targets`).
        n_steps: number of batches (the maximum when ``adaptive``); fewer if ``batches`` runs out.
        adaptive: stop early once every layer's importance changed by < ``tol`` (relative).
        min_steps: the smallest number of steps before an adaptive stop.
        device: where the accumulated gradients live (``"cpu"`` offloads them).

    Returns:
        ``{full module name: G}``. The ``requires_grad`` flags of all parameters are restored.
    """
    owner = "collect_gradients"
    n_steps = positive_int("n_steps", owner, n_steps)
    min_steps = positive_int("min_steps", owner, min_steps)
    if not tol > 0:
        raise param_error("tol", owner, "positive", tol)
    targets = find_targets(model, target_modules, owner)
    weights = {name: mod.weight for name, mod in targets.items()}
    flags = {p: p.requires_grad for p in model.parameters()}
    sums: dict[str, Tensor] = {}
    previous: dict[str, float] | None = None
    steps = 0
    try:
        for p in model.parameters():
            p.requires_grad_(False)
        for w in weights.values():
            w.requires_grad_(True)
        for batch in batches:
            loss = loss_fn(model, batch)
            if not isinstance(loss, Tensor) or loss.numel() != 1:
                raise param_error(
                    "loss_fn", owner, "a callable returning a scalar tensor", Described(repr(loss))
                )
            if loss.requires_grad:
                grads = torch.autograd.grad(loss, list(weights.values()), allow_unused=True)
            else:  # no target weight is on the loss's graph
                grads = (None,) * len(weights)
            for name, g in zip(weights, grads, strict=True):
                if g is None:
                    raise param_error(
                        "target_modules",
                        owner,
                        "modules the loss depends on",
                        Described(f"{name!r}, which received no gradient"),
                    )
                g = g.detach().to(device=device, dtype=torch.float32)
                sums[name] = sums[name] + g if name in sums else g.clone()
            steps += 1
            if adaptive:
                scores = {n: _mean_abs_wg(weights[n], s / steps) for n, s in sums.items()}
                if (
                    previous is not None
                    and steps >= min_steps
                    and all(abs(scores[n] - previous[n]) < tol * abs(previous[n]) for n in scores)
                ):
                    break
                previous = scores
            if steps >= n_steps:
                break
    finally:
        for p, flag in flags.items():
            p.requires_grad_(flag)
    if steps == 0:
        raise param_error("batches", owner, "a non-empty iterable of batches", Described("none"))
    return {name: s / steps for name, s in sums.items()}
