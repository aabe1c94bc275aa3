"""The whole GoRA set-up before training: gradients -> importance -> ranks -> factors -> adapters.

:func:`plan_gora` runs steps 1-4 of the method and returns a :class:`GoRAPlan` (ranks, importances,
factors, timings); :func:`apply_plan` attaches the adapters (peft or native); :func:`apply_gora`
does both. The pretrained weights are never modified: after this, training is vanilla LoRA.

Every argument of :func:`plan_gora` and :func:`apply_gora` is checked when they are called, before
the gradient pass; errors name the argument as passed to them. NaN policy: refused (non-finite
target weights name ``model``, non-finite batches ``batches``, a non-finite loss or gradient
``loss_fn``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import Tensor, nn

from gora.allocation import IMPORTANCE_KINDS, Allocation, lora_budget, scores
from gora.allocation import allocate as allocate_shares
from gora.gradients import GradientPass, accumulate, finite_weights, module_arg, targets_of
from gora.initialization import factor_bytes, generator_arg, gradient_factors, random_a
from gora.layers import GoRALinear
from gora.peft_interop import load_factors_into_peft, peft_config
from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = ["GoRAPlan", "apply_gora", "apply_plan", "plan_gora"]

BACKENDS = ("peft", "native")


@dataclass
class GoRAPlan:
    """What GoRA decided before training.

    Attributes:
        ranks: ``{module name: r_i}`` (0: left unadapted).
        importances: ``{module name: I_i}``.
        factors: ``{module name: (A, B)}`` for every layer with ``r_i > 0``.
        shapes: ``{module name: (out, in)}``.
        budget: plain LoRA's trainable count at the reference rank, ``sum r0 (m + n)``.
        trainable: the adapters' actual count, ``sum r_i (m_i + n_i)``.
        n_steps: gradient batches used; grad_time_s, init_time_s: wall times of the gradient
            pass and of allocation + initialisation.
        lora_alpha, rslora: the adapters' scale ``lora_alpha / sqrt(r)`` (or ``/ r``).
    """

    ranks: dict[str, int]
    importances: dict[str, float]
    factors: dict[str, tuple[Tensor, Tensor]]
    shapes: dict[str, tuple[int, int]]
    budget: int
    trainable: int
    n_steps: int
    grad_time_s: float
    init_time_s: float
    lora_alpha: float
    rslora: bool


def _rank_bound(
    features: Mapping[str, int], budget: int, options: Allocation, allocate: bool
) -> dict[str, int]:
    """The largest rank each layer can get: ``r0`` without allocation, else the clamp of the
    whole budget on that layer, ``max(r_min, min(r_max, ceil(B / (m + n))))``."""
    if not allocate:
        return dict.fromkeys(features, options.base_rank)
    return {
        name: max(options.r_min, min(options.r_max, math.ceil(budget / f)))
        for name, f in features.items()
    }


def _plan(
    owner: str,
    model: Any,
    batches: Any,
    loss_fn: Any,
    target_modules: Any,
    base_rank: Any,
    lora_alpha: Any,
    *,
    r_min: Any = None,
    r_max: Any = None,
    n_steps: Any = 32,
    adaptive: Any = False,
    tol: Any = 0.1,
    min_steps: Any = 3,
    importance: Any = "mean_abs_wg",
    rounding: Any = "round",
    softmax: Any = False,
    gamma: Any = 5e-2,
    rslora: Any = True,
    allocate: Any = True,
    init: Any = "gradient",
    generator: Any = None,
    device: Any = "cpu",
) -> GoRAPlan:
    """:func:`plan_gora` with errors worded for ``owner`` (the function the user called)."""
    # Every check first: nothing runs forward or backward before the arguments are known good.
    module_arg("model", owner, model)
    base_rank = check_int("base_rank", owner, base_rank, low=1)
    lora_alpha = check_real("lora_alpha", owner, lora_alpha, low=0, low_open=True)
    r_min = max(1, base_rank // 2) if r_min is None else r_min
    r_max = 4 * base_rank if r_max is None else r_max
    options = Allocation.parse(owner, base_rank, r_min, r_max, rounding, softmax, 0.5)
    passes = GradientPass.parse(owner, n_steps, adaptive, tol, min_steps, device)
    check_choice("importance", owner, importance, IMPORTANCE_KINDS)
    gamma = check_real("gamma", owner, gamma, low=0)
    rslora = check_bool("rslora", owner, rslora)
    allocate = check_bool("allocate", owner, allocate)
    check_choice("init", owner, init, ("gradient", "lora"))
    generator_arg(owner, generator)
    targets = targets_of(model, target_modules, owner)
    finite_weights(owner, targets)
    shapes = {name: tuple(mod.weight.shape) for name, mod in targets.items()}
    features = {name: m + n for name, (m, n) in shapes.items()}
    budget = base_rank * sum(features.values())
    bound = _rank_bound(features, budget, options, allocate)
    need = sum(factor_bytes(m, n, bound[name], torch.float32) for name, (m, n) in shapes.items())
    floor = sum(factor_bytes(m, n, options.r_min, torch.float32) for m, n in shapes.values())
    culprit = "r_min" if allocate and 2 * floor >= need else "base_rank"
    check_memory(culprit, owner, options.r_min if culprit == "r_min" else base_rank, need)

    start = time.perf_counter()
    grads, steps = accumulate(model, batches, loss_fn, targets, passes, owner)
    grad_time = time.perf_counter() - start
    start = time.perf_counter()
    weights = {name: mod.weight for name, mod in targets.items()}
    importances = scores(weights, grads, importance)
    if allocate:
        if not sum(importances.values()) > 0:
            raise param_error(
                "loss_fn",
                owner,
                "a loss whose gradients reach the target weights",
                Described("all-zero importances"),
            )
        ranks = allocate_shares(importances, features, budget, options)
    else:
        ranks = dict.fromkeys(importances, base_rank)
    factors = {}
    for name, rank in ranks.items():
        if rank == 0:
            continue
        G = grads[name]
        if init == "gradient":
            A, B = gradient_factors(G, rank, lora_alpha, gamma, rslora, generator)
        else:
            A = random_a(rank, G.shape[1], G.dtype, generator)
            B = torch.zeros(G.shape[0], rank, dtype=G.dtype)
        dtype = targets[name].weight.dtype
        factors[name] = (A.to(dtype), B.to(dtype))
    init_time = time.perf_counter() - start
    return GoRAPlan(
        ranks=ranks,
        importances=importances,
        factors=factors,
        shapes=shapes,
        budget=budget,
        trainable=lora_budget(shapes, ranks),
        n_steps=steps,
        grad_time_s=grad_time,
        init_time_s=init_time,
        lora_alpha=lora_alpha,
        rslora=rslora,
    )


def plan_gora(
    model: nn.Module,
    batches: Iterable[Any],
    loss_fn: Callable[[nn.Module, Any], Tensor],
    target_modules: list[str],
    base_rank: int = 8,
    lora_alpha: float = 16,
    *,
    r_min: int | None = None,
    r_max: int | None = None,
    n_steps: int = 32,
    adaptive: bool = False,
    tol: float = 0.1,
    min_steps: int = 3,
    importance: str = "mean_abs_wg",
    rounding: Literal["round", "floor", "ceil"] = "round",
    softmax: bool = False,
    gamma: float = 5e-2,
    rslora: bool = True,
    allocate: bool = True,
    init: Literal["gradient", "lora"] = "gradient",
    generator: torch.Generator | None = None,
    device: str | torch.device = "cpu",
) -> GoRAPlan:
    """Run GoRA's gradient pass, importance, allocation and initialisation (model unchanged).

    ``r_min`` / ``r_max`` default to the scripts' ``r0 / 2`` and ``4 r0``. ``allocate=False``
    keeps every rank at ``r0`` and ``init="lora"`` uses plain LoRA's ``B = 0`` (the two ablations).
    Other arguments: see :func:`collect_gradients`, :func:`importance_scores`,
    :func:`allocate_ranks` and :func:`init_factors`. All of them are checked here, before the
    gradient pass, and a plan whose factors would not fit in memory is refused.

    NaN policy: refused, see the module docstring.
    """
    return _plan(
        "plan_gora",
        model,
        batches,
        loss_fn,
        target_modules,
        base_rank,
        lora_alpha,
        r_min=r_min,
        r_max=r_max,
        n_steps=n_steps,
        adaptive=adaptive,
        tol=tol,
        min_steps=min_steps,
        importance=importance,
        rounding=rounding,
        softmax=softmax,
        gamma=gamma,
        rslora=rslora,
        allocate=allocate,
        init=init,
        generator=generator,
        device=device,
    )


def _set_submodule(model: nn.Module, name: str, module: nn.Module) -> None:
    parent, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, child, module)


def _saved_modules(owner: str, model: nn.Module, modules_to_save: Any) -> list[nn.Module]:
    """The one module named by each entry of ``modules_to_save`` (full name or ``.``-suffix)."""
    if modules_to_save is None:
        return []
    if isinstance(modules_to_save, str) or not isinstance(modules_to_save, (list, tuple)):
        raise param_error(
            "modules_to_save",
            owner,
            "None or a list of module names",
            describe(modules_to_save),
            cls=TypeError,
        )
    found = []
    for name in modules_to_save:
        hits = [m for n, m in model.named_modules() if n and (n == name or n.endswith(f".{name}"))]
        if not isinstance(name, str) or len(hits) != 1:
            raise param_error(
                "modules_to_save",
                owner,
                "names of exactly one module each",
                Described(f"{name!r} matching {len(hits)} modules"),
            )
        found.append(hits[0])
    return found


def _plan_fits(owner: str, model: nn.Module, plan: Any) -> None:
    """Refuse a plan that is not a :class:`GoRAPlan` or whose layers ``model`` does not hold."""
    if not isinstance(plan, GoRAPlan):
        raise param_error(
            "plan", owner, "a GoRAPlan (from plan_gora)", describe(plan), cls=TypeError
        )
    if not plan.factors:
        raise param_error("plan", owner, "a plan with at least one adapted layer", plan.ranks)
    layers = dict(model.named_modules())
    for name, (A, B) in plan.factors.items():
        layer = layers.get(name)
        if type(layer) is not nn.Linear:
            raise param_error(
                "model",
                owner,
                "the model the plan was made for",
                Described(f"a model without the nn.Linear {name!r}"),
            )
        out_f, in_f = layer.weight.shape
        dims = {"out": (out_f, name), "in": (in_f, name), "r": (plan.ranks[name], "plan.ranks")}
        check_tensor("plan", owner, A, shape=("r", "in"), dims=dims)
        check_tensor("plan", owner, B, shape=("out", "r"), dims=dims)


def _attach(
    model: nn.Module,
    plan: GoRAPlan,
    backend: str,
    modules_to_save: list[str] | None,
    saved: list[nn.Module],
) -> nn.Module:
    """Attach checked adapters (see :func:`apply_plan`)."""
    device = model.get_submodule(next(iter(plan.factors))).weight.device
    factors = {n: (A.to(device), B.to(device)) for n, (A, B) in plan.factors.items()}
    if backend == "peft":
        from peft import get_peft_model

        config = peft_config(
            plan.ranks, plan.lora_alpha, None, plan.rslora, modules_to_save=modules_to_save
        )
        peft_model = get_peft_model(model, config)
        load_factors_into_peft(peft_model, factors)
        return peft_model
    for p in model.parameters():
        p.requires_grad_(False)
    for name, (A, B) in factors.items():
        base = model.get_submodule(name)
        layer = GoRALinear(base, A.shape[0], plan.lora_alpha, rslora=plan.rslora, A=A, B=B)
        _set_submodule(model, name, layer)
    for module in saved:
        for p in module.parameters():
            p.requires_grad_(True)
    return model


def apply_plan(
    model: nn.Module,
    plan: GoRAPlan,
    backend: Literal["peft", "native"] = "peft",
    modules_to_save: list[str] | None = None,
) -> nn.Module:
    """Attach the plan's adapters to ``model`` and freeze everything else.

    ``backend="peft"``: ``peft.get_peft_model`` with :func:`to_peft_config` and the factors
    loaded (returns the ``PeftModel``, which wraps ``model``). ``"native"``: every target layer
    is replaced in place by a :class:`GoRALinear` (returns ``model``). ``modules_to_save`` stay
    trainable (peft's option of that name, e.g. a new classification head). A plan made for
    another model, or whose factors hold NaN or inf, is refused before ``model`` is changed.
    """
    owner = "apply_plan"
    module_arg("model", owner, model)
    check_choice("backend", owner, backend, BACKENDS)
    saved = _saved_modules(owner, model, modules_to_save)
    _plan_fits(owner, model, plan)
    return _attach(model, plan, backend, modules_to_save, saved)


def apply_gora(
    model: nn.Module,
    batches: Iterable[Any],
    loss_fn: Callable[[nn.Module, Any], Tensor],
    target_modules: list[str],
    base_rank: int = 8,
    lora_alpha: float = 16,
    backend: Literal["peft", "native"] = "peft",
    modules_to_save: list[str] | None = None,
    **kw: Any,
) -> nn.Module:
    """GoRA end to end: :func:`plan_gora` (``**kw`` go there) then :func:`apply_plan`.

    Returns the adapted model: a ``peft.PeftModel`` (``backend="peft"``) or ``model`` with
    :class:`GoRALinear` layers (``"native"``). The pretrained weights are left bit-identical.
    Every argument is checked before the gradient pass, with errors naming ``apply_gora``;
    NaN policy: refused, as in :func:`plan_gora`.
    """
    owner = "apply_gora"
    module_arg("model", owner, model)
    check_choice("backend", owner, backend, BACKENDS)
    saved = _saved_modules(owner, model, modules_to_save)
    plan = _plan(owner, model, batches, loss_fn, target_modules, base_rank, lora_alpha, **kw)
    return _attach(model, plan, backend, modules_to_save, saved)
