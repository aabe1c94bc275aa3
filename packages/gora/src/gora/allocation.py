"""Steps 2 and 3 of GoRA: per-layer importance and rank allocation under the LoRA budget.

Importance of layer i from its weight ``W_i`` and averaged gradient ``G_i`` (both out x in):

- ``"mean_abs_wg"`` (default; the released scripts' ``union_mean``): ``I_i = mean(|W_i * G_i|)``,
  the first-order sensitivity ``|dL/dW * W|`` of the loss to removing each weight, averaged;
- ``"fro_wg"``: ``||W_i * G_i||_F``;
- ``"nuc_g"`` / ``"nuc_wg"``: nuclear norm of ``G_i`` / of ``W_i * G_i`` (exact SVD);
- ``"nuc_g_lowrank"`` / ``"nuc_wg_lowrank"``: the same from the top 32 singular values of a
  randomized SVD (``torch.svd_lowrank``), for large matrices.

Allocation: the budget is plain LoRA's trainable count ``B = sum_i r0 (m_i + n_i)``. With shares
``a_i = I_i / sum_j I_j`` (or a softmax of the min-max-scaled ``I`` at temperature 0.5),

    r_i = clamp( round( B a_i / (m_i + n_i) ), r_min, r_max )

(``"floor"`` / ``"ceil"`` for the scripts' "conserved" / "radical"). Clamping can move the actual
count ``sum_i r_i (m_i + n_i)`` off ``B``; :func:`lora_budget` reports it. A layer gets rank 0 only
when ``r_min = 0`` (it is then left unadapted).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import Tensor

from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = ["IMPORTANCE_KINDS", "allocate_ranks", "importance_scores", "lora_budget"]

IMPORTANCE_KINDS = ("mean_abs_wg", "fro_wg", "nuc_g", "nuc_wg", "nuc_g_lowrank", "nuc_wg_lowrank")
_ROUNDING = {"round": round, "floor": math.floor, "ceil": math.ceil}


@dataclass(frozen=True)
class Allocation:
    """The validated options of the rank allocation (shared by :func:`allocate_ranks` and
    :func:`gora.plan_gora`, which check them at their own entry)."""

    base_rank: int
    r_min: int
    r_max: int
    rounding: str
    softmax: bool
    temperature: float

    @classmethod
    def parse(
        cls,
        owner: str,
        base_rank: Any,
        r_min: Any,
        r_max: Any,
        rounding: Any,
        softmax: Any,
        temperature: Any,
    ) -> Allocation:
        """Check every option, worded for ``owner`` (the function the user called)."""
        base_rank = check_int("base_rank", owner, base_rank, low=1)
        r_min = check_int("r_min", owner, r_min, low=0)
        r_max = check_int("r_max", owner, r_max, low=1)
        if r_min > r_max:
            raise param_error("r_min", owner, f"at most r_max={r_max}", r_min)
        check_choice("rounding", owner, rounding, tuple(_ROUNDING))
        softmax = check_bool("softmax", owner, softmax)
        temperature = check_real("temperature", owner, temperature, low=0, low_open=True)
        return cls(base_rank, r_min, r_max, rounding, softmax, temperature)


def layer_shapes(owner: str, shapes: Any, layers: Any = None) -> dict[str, tuple[int, int]]:
    """``shapes`` as ``{name: (out, in)}`` with positive integer sizes, for every name of
    ``layers`` (default: every key of ``shapes``); errors name ``shapes`` at ``owner``."""
    if not isinstance(shapes, Mapping):
        raise param_error(
            "shapes", owner, "a mapping of layer name to (out, in)", describe(shapes), cls=TypeError
        )
    out = {}
    for name in shapes if layers is None else layers:
        if name not in shapes:
            raise param_error(
                "shapes",
                owner,
                "an (out, in) shape for every layer",
                Described(f"none for {name!r}"),
            )
        shape = shapes[name]
        ok = (
            isinstance(shape, (tuple, list))
            and len(shape) == 2
            and all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in shape)
            and min(shape) >= 1
        )
        if not ok:
            raise param_error(
                "shapes",
                owner,
                "(out, in) pairs of positive integers",
                Described(f"{shape!r} for {name!r}"),
            )
        out[name] = (int(shape[0]), int(shape[1]))
    return out


def importance_values(owner: str, importances: Any) -> dict[str, float]:
    """``importances`` as ``{name: float}``: finite, non-negative, not all zero."""
    if not isinstance(importances, Mapping):
        raise param_error(
            "importances",
            owner,
            "a mapping of layer name to importance",
            describe(importances),
            cls=TypeError,
        )
    if not importances:
        raise param_error("importances", owner, "a non-empty mapping", Described("an empty one"))
    values = {}
    for name, value in importances.items():
        if isinstance(value, Tensor) and value.numel() == 1:
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise param_error(
                "importances",
                owner,
                "real numbers",
                Described(f"{describe(value)} for {name!r}"),
                cls=TypeError,
            )
        if not (math.isfinite(value) and value >= 0):
            raise param_error(
                "importances", owner, "finite and non-negative", Described(f"{value} for {name!r}")
            )
        values[name] = float(value)
    if sum(values.values()) <= 0:
        raise param_error("importances", owner, "not all zero", Described("all zero"))
    return values


def _nuclear(M: Tensor, lowrank: bool) -> float:
    if lowrank and min(M.shape) > 32:
        _, S, _ = torch.svd_lowrank(M, q=32, niter=4)
        return float(S.sum())
    return float(torch.linalg.matrix_norm(M, ord="nuc"))


def scores(
    weights: Mapping[str, Tensor], grads: Mapping[str, Tensor], kind: str
) -> dict[str, float]:
    """The importances of already checked matrices (``W`` cast to ``G``'s dtype and device)."""
    out = {}
    for name, G in grads.items():
        W = weights[name].detach().to(device=G.device, dtype=G.dtype)
        G = G.detach()
        if kind == "mean_abs_wg":
            out[name] = float((W * G).abs().mean())
        elif kind == "fro_wg":
            out[name] = float(torch.linalg.matrix_norm(W * G))
        else:
            target = G if kind.startswith("nuc_g") else W * G
            out[name] = _nuclear(target, kind.endswith("lowrank"))
    return out


def importance_scores(
    weights: Mapping[str, Tensor], grads: Mapping[str, Tensor], kind: str = "mean_abs_wg"
) -> dict[str, float]:
    """Importance ``I_i`` of every layer in ``grads`` (see the module docstring for ``kind``).

    ``weights[name]`` and ``grads[name]`` are floating out x in matrices of equal shape; the
    weight is cast to the gradient's dtype and device. NaN or inf in either is refused
    (``ValueError``), as are an empty ``grads`` and a gradient without its weight.
    """
    owner = "importance_scores"
    check_choice("kind", owner, kind, IMPORTANCE_KINDS)
    for name, value in (("weights", weights), ("grads", grads)):
        if not isinstance(value, Mapping):
            raise param_error(
                name, owner, "a mapping of layer name to matrix", describe(value), cls=TypeError
            )
    if not grads:
        raise param_error("grads", owner, "a non-empty mapping", Described("an empty one"))
    for name, G in grads.items():
        if name not in weights:
            raise param_error(
                "weights", owner, "a weight for every gradient", Described(f"none for {name!r}")
            )
        dims: dict = {}
        check_tensor("weights", owner, weights[name], shape=("m", "n"), dims=dims)
        check_tensor("grads", owner, G, shape=("m", "n"), dims=dims)
    return scores(weights, grads, kind)


def lora_budget(shapes: Mapping[str, tuple[int, int]], r: int | Mapping[str, int]) -> int:
    """Trainable parameters of LoRA adapters: ``sum_i r_i (m_i + n_i)`` for (out, in) shapes.

    ``r`` is one rank (an integer >= 0) for every layer or a mapping of per-layer ranks.
    Non-integer or negative sizes and ranks are refused (there is no NaN to propagate).

    >>> lora_budget({"q": (64, 64), "fc1": (256, 64)}, 4)
    1792
    """
    owner = "lora_budget"
    sizes = layer_shapes(owner, shapes)
    if isinstance(r, Mapping):
        ranks = {}
        for name in sizes:
            if name not in r:
                raise param_error(
                    "r", owner, "a rank for every layer", Described(f"none for {name!r}")
                )
            value = r[name]
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise param_error(
                    "r", owner, "non-negative integer ranks", Described(f"{value!r} for {name!r}")
                )
            ranks[name] = int(value)
    else:
        ranks = dict.fromkeys(sizes, check_int("r", owner, r, low=0))
    return sum(ranks[name] * (m + n) for name, (m, n) in sizes.items())


def allocate(
    values: Mapping[str, float],
    features: Mapping[str, int],
    budget: int,
    options: Allocation,
) -> dict[str, int]:
    """The allocation of checked importances ``values`` (``features[name] = m + n``)."""
    round_fn = _ROUNDING[options.rounding]
    imp = torch.tensor(list(values.values()), dtype=torch.float64)
    if options.softmax:
        spread = imp.max() - imp.min()
        scaled = (imp - imp.min()) / spread if spread > 0 else torch.zeros_like(imp)
        shares = torch.softmax(scaled / options.temperature, dim=0)
    else:
        shares = imp / imp.sum()
    ranks = {}
    for name, share in zip(values, shares.tolist(), strict=True):
        # 12 digits drop float noise so that e.g. 7.999999999999 floors to 8, not 7.
        raw = round_fn(round(budget * share / features[name], 12))
        ranks[name] = int(min(max(raw, options.r_min), options.r_max))
    return ranks


def allocate_ranks(
    importances: Mapping[str, float],
    shapes: Mapping[str, tuple[int, int]],
    base_rank: int = 8,
    r_min: int = 4,
    r_max: int = 32,
    rounding: Literal["round", "floor", "ceil"] = "round",
    *,
    budget: int | None = None,
    softmax: bool = False,
    temperature: float = 0.5,
) -> dict[str, int]:
    """Per-layer ranks proportional to importance within the budget of rank-``base_rank`` LoRA.

    Args:
        importances: ``I_i >= 0`` per layer (e.g. from :func:`importance_scores`); NaN, inf,
            negative or all-zero importances are refused (``ValueError``).
        shapes: ``(out, in)`` of every layer in ``importances``.
        base_rank: the reference rank ``r0``; the budget is ``lora_budget(shapes, r0)``.
        r_min, r_max: clamp of every rank (``r_min = 0`` lets a layer go unadapted).
        rounding: ``"round"`` (moderate), ``"floor"`` (conserved), ``"ceil"`` (radical).
        budget: an explicit trainable-parameter budget instead of the rank-``r0`` one; it must
            afford at least one rank per layer (``>= sum_i (m_i + n_i)``).
        softmax: shares ``softmax((I - min I) / (max I - min I) / temperature)`` instead of
            ``I / sum I``.
        temperature: the softmax temperature (> 0).

    Returns:
        ``{name: r_i}`` in the order of ``importances``.

    >>> allocate_ranks({"a": 2.0, "b": 1.0, "c": 1.0}, dict.fromkeys("abc", (64, 64)), r_min=0)
    {'a': 12, 'b': 6, 'c': 6}
    """
    owner = "allocate_ranks"
    options = Allocation.parse(owner, base_rank, r_min, r_max, rounding, softmax, temperature)
    values = importance_values(owner, importances)
    sizes = layer_shapes(owner, shapes, values)
    features = {name: m + n for name, (m, n) in sizes.items()}
    one_rank = sum(features.values())
    if budget is None:
        budget = options.base_rank * one_rank
    else:
        budget = check_int("budget", owner, budget, low=one_rank)
    return allocate(values, features, budget, options)
