"""The whole GoRA set-up before training: gradients -> importance -> ranks -> factors -> adapters.

:func:`plan_gora` runs steps 1-4 of the method and returns a :class:`GoRAPlan` (ranks, importances,
factors, timings); :func:`apply_plan` attaches the adapters (peft or native); :func:`apply_gora`
does both. The pretrained weights are never modified: after this, training is vanilla LoRA.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import Tensor, nn

from gora._checks import positive_int
from gora.allocation import allocate_ranks, importance_scores, lora_budget
from gora.gradients import collect_gradients, find_targets
from gora.initialization import init_factors, kaiming_a
from gora.layers import GoRALinear
from gora.peft_interop import load_factors_into_peft, to_peft_config
from paperkit import Described, check_choice, param_error

__all__ = ["GoRAPlan", "apply_gora", "apply_plan", "plan_gora"]


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
    :func:`allocate_ranks` and :func:`init_factors`.
    """
    owner = "plan_gora"
    check_choice("init", owner, init, ("gradient", "lora"))
    base_rank = positive_int("base_rank", owner, base_rank)
    r_min = max(1, base_rank // 2) if r_min is None else r_min
    r_max = 4 * base_rank if r_max is None else r_max
    targets = find_targets(model, target_modules, owner)
    shapes = {name: tuple(mod.weight.shape) for name, mod in targets.items()}
    calls = 0

    def counted(m: nn.Module, batch: Any) -> Tensor:
        nonlocal calls
        calls += 1
        return loss_fn(m, batch)

    start = time.perf_counter()
    grads = collect_gradients(
        model,
        batches,
        counted,
        list(targets),
        n_steps=n_steps,
        adaptive=adaptive,
        tol=tol,
        min_steps=min_steps,
        device=device,
    )
    grad_time = time.perf_counter() - start
    start = time.perf_counter()
    weights = {name: mod.weight for name, mod in targets.items()}
    scores = importance_scores(weights, grads, importance)
    ranks = allocate_ranks(scores, shapes, base_rank, r_min, r_max, rounding, softmax=softmax)
    if not allocate:  # the allocation above still checked the arguments
        ranks = dict.fromkeys(scores, base_rank)
    factors = {}
    for name, rank in ranks.items():
        if rank == 0:
            continue
        G = grads[name]
        if init == "gradient":
            A, B = init_factors(G, rank, lora_alpha, gamma, rslora, generator=generator)
        else:
            A = kaiming_a(rank, G.shape[1], dtype=G.dtype, generator=generator)
            B = torch.zeros(G.shape[0], rank, dtype=G.dtype)
        dtype = targets[name].weight.dtype
        factors[name] = (A.to(dtype), B.to(dtype))
    init_time = time.perf_counter() - start
    return GoRAPlan(
        ranks=ranks,
        importances=scores,
        factors=factors,
        shapes=shapes,
        budget=lora_budget(shapes, base_rank),
        trainable=lora_budget(shapes, ranks),
        n_steps=calls,
        grad_time_s=grad_time,
        init_time_s=init_time,
        lora_alpha=float(lora_alpha),
        rslora=rslora,
    )


def _set_submodule(model: nn.Module, name: str, module: nn.Module) -> None:
    parent, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, child, module)


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
    trainable (peft's option of that name, e.g. a new classification head).
    """
    check_choice("backend", "apply_plan", backend, ("peft", "native"))
    device = next(model.parameters()).device
    factors = {n: (A.to(device), B.to(device)) for n, (A, B) in plan.factors.items()}
    if backend == "peft":
        from peft import get_peft_model

        config = to_peft_config(
            plan.ranks, plan.lora_alpha, use_rslora=plan.rslora, modules_to_save=modules_to_save
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
    for name in modules_to_save or []:
        for p in _find_one(model, name).parameters():
            p.requires_grad_(True)
    return model


def _find_one(model: nn.Module, name: str) -> nn.Module:
    """The one module whose full name is ``name`` or ends with ``"." + name``."""
    hits = [m for n, m in model.named_modules() if n == name or n.endswith("." + name)]
    if len(hits) != 1:
        raise param_error(
            "modules_to_save",
            "apply_plan",
            "names of exactly one module each",
            Described(f"{name!r} matching {len(hits)} modules"),
        )
    return hits[0]


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
    """
    check_choice("backend", "apply_gora", backend, ("peft", "native"))
    plan = plan_gora(model, batches, loss_fn, target_modules, base_rank, lora_alpha, **kw)
    return apply_plan(model, plan, backend, modules_to_save)
