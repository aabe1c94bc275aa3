"""Step 1 of GoRA: the gradient-accumulation pass before training.

All parameters are frozen except the weights ``W_i`` (out x in) of the target ``nn.Linear``
layers; ``N`` batches are run forward and backward, and the averaged gradient

    G_i = (1/N) * sum_{s=1..N} dL_s / dW_i

is kept per layer (on ``device``, e.g. the CPU to offload it). No optimizer step is taken and the
parameters' ``.grad`` fields are left untouched (gradients come from ``torch.autograd.grad``).

With ``adaptive=True``, ``n_steps`` is an upper bound: the pass stops once every layer's importance
``I_i = mean(|W_i * G_i|)`` (of the running mean) changed by less than ``tol`` relative to the
previous step, after at least ``min_steps`` steps.

NaN policy: non-finite target weights, batches holding NaN or inf, and a non-finite loss or
gradient are refused with a ``ValueError`` naming ``model``, ``batches`` or ``loss_fn``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from paperkit import Described, check_bool, check_int, check_real, describe, param_error

__all__ = ["collect_gradients", "find_targets"]


def module_arg(name: str, owner: str, model: Any) -> nn.Module:
    """``model`` when it is an ``nn.Module``, else the worded ``TypeError``."""
    if not isinstance(model, nn.Module):
        raise param_error(name, owner, "a torch.nn.Module", describe(model), cls=TypeError)
    return model


def device_arg(owner: str, device: Any) -> torch.device:
    """``device`` as a ``torch.device``: ``"cpu"``, or ``"cuda"``/``"cuda:N"`` when CUDA is here."""
    if not isinstance(device, (str, torch.device)):
        raise param_error(
            "device", owner, "a torch device name such as 'cpu'", describe(device), cls=TypeError
        )
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise param_error("device", owner, "a torch device name such as 'cpu'", device) from None
    if dev.type not in ("cpu", "cuda") or (dev.type == "cuda" and not torch.cuda.is_available()):
        raise param_error("device", owner, "'cpu', or a CUDA device when one is present", device)
    return dev


def targets_of(model: Any, target_modules: Any, owner: str) -> dict[str, nn.Linear]:
    """The targets of :func:`find_targets`, with errors worded for ``owner``."""
    module_arg("model", owner, model)
    if isinstance(target_modules, str) or not isinstance(target_modules, (list, tuple)):
        raise param_error(
            "target_modules",
            owner,
            "a list of module names",
            describe(target_modules),
            cls=TypeError,
        )
    if not target_modules:
        raise param_error("target_modules", owner, "a non-empty list of module names", [])
    found: dict[str, nn.Linear] = {}
    for target in target_modules:
        if not isinstance(target, str):
            raise param_error(
                "target_modules", owner, "a list of module names", describe(target), cls=TypeError
            )
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


def find_targets(model: nn.Module, target_modules: list[str]) -> dict[str, nn.Linear]:
    """The ``nn.Linear`` modules named by ``target_modules``, keyed by their full names.

    A target matches a module whose full name equals it or ends with ``"." + target`` (peft's
    rule), so ``"q"`` selects every ``*.q``. Every target must match at least one module, and every
    matched module must be an ``nn.Linear`` (``ValueError`` otherwise). Reads no tensor values.

    >>> from torch import nn
    >>> list(find_targets(nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)), ["0", "2"]))
    ['0', '2']
    """
    return targets_of(model, target_modules, "find_targets")


@dataclass(frozen=True)
class GradientPass:
    """The validated options of the gradient pass (see :func:`collect_gradients`)."""

    n_steps: int
    adaptive: bool
    tol: float
    min_steps: int
    device: torch.device

    @classmethod
    def parse(
        cls, owner: str, n_steps: Any, adaptive: Any, tol: Any, min_steps: Any, device: Any
    ) -> GradientPass:
        return cls(
            n_steps=check_int("n_steps", owner, n_steps, low=1),
            adaptive=check_bool("adaptive", owner, adaptive),
            tol=check_real("tol", owner, tol, low=0, low_open=True),
            min_steps=check_int("min_steps", owner, min_steps, low=1),
            device=device_arg(owner, device),
        )


def finite_weights(owner: str, targets: Mapping[str, nn.Linear]) -> None:
    """Refuse a model whose target weights hold NaN or inf (one pass over each weight)."""
    for name, mod in targets.items():
        if not bool(torch.isfinite(mod.weight.detach()).all()):
            raise param_error(
                "model",
                owner,
                "a model whose target weights are finite",
                Described(f"NaN or inf in {name!r}"),
            )


def _finite_batch(value: Any) -> bool:
    """Whether every floating tensor inside ``value`` (tuples, lists, dicts of them) is finite."""
    if isinstance(value, Tensor):
        return not value.is_floating_point() or bool(torch.isfinite(value).all())
    if isinstance(value, (list, tuple)):
        return all(_finite_batch(v) for v in value)
    if isinstance(value, Mapping):
        return all(_finite_batch(v) for v in value.values())
    return True


def _mean_abs_wg(W: Tensor, G: Tensor) -> float:
    return float((W.detach().to(G) * G).abs().mean())


def accumulate(
    model: nn.Module,
    batches: Any,
    loss_fn: Any,
    targets: Mapping[str, nn.Linear],
    options: GradientPass,
    owner: str,
) -> tuple[dict[str, Tensor], int]:
    """The averaged gradients of the target weights and the number of batches used.

    ``model`` and ``targets`` are checked by the caller; ``batches`` and ``loss_fn`` here, with
    errors worded for ``owner``. The ``requires_grad`` flags of all parameters are restored.
    """
    if isinstance(batches, (str, bytes)) or not isinstance(batches, Iterable):
        raise param_error(
            "batches", owner, "an iterable of batches", describe(batches), cls=TypeError
        )
    if not callable(loss_fn):
        raise param_error(
            "loss_fn", owner, "a callable loss_fn(model, batch)", describe(loss_fn), cls=TypeError
        )
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
            if not _finite_batch(batch):
                raise param_error(
                    "batches",
                    owner,
                    "batches of finite values",
                    Described(f"NaN or inf in batch {steps}"),
                )
            loss = loss_fn(model, batch)
            if not isinstance(loss, Tensor) or loss.numel() != 1:
                raise param_error(
                    "loss_fn", owner, "a callable returning a scalar tensor", describe(loss)
                )
            if not bool(torch.isfinite(loss.detach()).all()):
                raise param_error(
                    "loss_fn",
                    owner,
                    "a callable returning a finite loss",
                    Described(f"{loss.item()} on batch {steps}"),
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
                g = g.detach().to(device=options.device, dtype=torch.float32)
                sums[name] = sums[name] + g if name in sums else g.clone()
            steps += 1
            if options.adaptive:
                scores = {n: _mean_abs_wg(weights[n], s / steps) for n, s in sums.items()}
                if (
                    previous is not None
                    and steps >= options.min_steps
                    and all(
                        abs(scores[n] - previous[n]) < options.tol * abs(previous[n])
                        for n in scores
                    )
                ):
                    break
                previous = scores
            if steps >= options.n_steps:
                break
    finally:
        for p, flag in flags.items():
            p.requires_grad_(flag)
    if steps == 0:
        raise param_error("batches", owner, "a non-empty iterable of batches", Described("none"))
    grads = {name: s / steps for name, s in sums.items()}
    for name, G in grads.items():
        if not bool(torch.isfinite(G).all()):
            raise param_error(
                "loss_fn",
                owner,
                "a loss with finite gradients",
                Described(f"NaN or inf in the gradient of {name!r}"),
            )
    return grads, steps


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
        tol: the relative change of an adaptive stop (> 0).
        min_steps: the smallest number of steps before an adaptive stop.
        device: where the accumulated gradients live (``"cpu"`` offloads them).

    Returns:
        ``{full module name: G}``. The ``requires_grad`` flags of all parameters are restored.

    NaN policy: refused (see the module docstring): NaN or inf in the target weights, in a batch,
    in the loss or in a gradient raise a ``ValueError``.
    """
    owner = "collect_gradients"
    options = GradientPass.parse(owner, n_steps, adaptive, tol, min_steps, device)
    targets = targets_of(model, target_modules, owner)
    finite_weights(owner, targets)
    grads, _ = accumulate(model, batches, loss_fn, targets, options, owner)
    return grads
