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
from collections.abc import Mapping
from typing import Literal

import torch
from torch import Tensor

from gora._checks import non_negative_int, positive_int
from paperkit import Described, check_choice, param_error

__all__ = ["IMPORTANCE_KINDS", "allocate_ranks", "importance_scores", "lora_budget"]

IMPORTANCE_KINDS = ("mean_abs_wg", "fro_wg", "nuc_g", "nuc_wg", "nuc_g_lowrank", "nuc_wg_lowrank")
_ROUNDING = {"round": round, "floor": math.floor, "ceil": math.ceil}


def _nuclear(M: Tensor, lowrank: bool) -> float:
    if lowrank and min(M.shape) > 32:
        _, S, _ = torch.svd_lowrank(M, q=32, niter=4)
        return float(S.sum())
    return float(torch.linalg.matrix_norm(M, ord="nuc"))


def importance_scores(
    weights: Mapping[str, Tensor], grads: Mapping[str, Tensor], kind: str = "mean_abs_wg"
) -> dict[str, float]:
    """Importance ``I_i`` of every layer in ``grads`` (see the module docstring for ``kind``).

    ``weights[name]`` and ``grads[name]`` are out x in matrices of equal shape.
    """
    owner = "importance_scores"
    check_choice("kind", owner, kind, IMPORTANCE_KINDS)
    if not grads:
        raise param_error("grads", owner, "a non-empty mapping", Described("an empty mapping"))
    scores = {}
    for name, G in grads.items():
        if name not in weights:
            raise param_error("weights", owner, "a weight for every gradient", Described(name))
        W = weights[name].detach().to(device=G.device, dtype=G.dtype)
        if W.shape != G.shape or G.ndim != 2:
            raise param_error(
                "grads",
                owner,
                "matrices of the same shape as the weights",
                Described(f"{name!r}: gradient {tuple(G.shape)}, weight {tuple(W.shape)}"),
            )
        G = G.detach()
        if kind == "mean_abs_wg":
            scores[name] = float((W * G).abs().mean())
        elif kind == "fro_wg":
            scores[name] = float(torch.linalg.matrix_norm(W * G))
        else:
            target = G if kind.startswith("nuc_g") else W * G
            scores[name] = _nuclear(target, kind.endswith("lowrank"))
    return scores


def lora_budget(shapes: Mapping[str, tuple[int, int]], r: int | Mapping[str, int]) -> int:
    """Trainable parameters of LoRA adapters: ``sum_i r_i (m_i + n_i)`` for (out, in) shapes.

    ``r`` is one rank for every layer or a mapping of per-layer ranks.
    """
    total = 0
    for name, (m, n) in shapes.items():
        rank = r[name] if isinstance(r, Mapping) else r
        total += int(rank) * (int(m) + int(n))
    return total


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
        importances: ``I_i >= 0`` per layer (e.g. from :func:`importance_scores`).
        shapes: ``(out, in)`` of every layer in ``importances``.
        base_rank: the reference rank ``r0``; the budget is ``lora_budget(shapes, r0)``.
        r_min, r_max: clamp of every rank (``r_min = 0`` lets a layer go unadapted).
        rounding: ``"round"`` (moderate), ``"floor"`` (conserved), ``"ceil"`` (radical).
        budget: an explicit trainable-parameter budget instead of the rank-``r0`` one; it must
            afford at least one rank per layer (``>= sum_i (m_i + n_i)``).
        softmax: shares ``softmax((I - min I) / (max I - min I) / temperature)`` instead of
            ``I / sum I``.

    Returns:
        ``{name: r_i}`` in the order of ``importances``.
    """
    owner = "allocate_ranks"
    base_rank = positive_int("base_rank", owner, base_rank)
    r_min = non_negative_int("r_min", owner, r_min)
    r_max = positive_int("r_max", owner, r_max)
    if r_min > r_max:
        raise param_error("r_min", owner, f"at most r_max={r_max}", r_min)
    round_fn = _ROUNDING[check_choice("rounding", owner, rounding, tuple(_ROUNDING))]
    if not importances:
        raise param_error("importances", owner, "a non-empty mapping", Described("empty"))
    missing = [name for name in importances if name not in shapes]
    if missing:
        raise param_error("shapes", owner, "an (out, in) shape for every layer", missing)
    values = torch.tensor([float(v) for v in importances.values()], dtype=torch.float64)
    if not torch.isfinite(values).all() or (values < 0).any() or values.sum() <= 0:
        raise param_error(
            "importances", owner, "finite, non-negative and not all zero", dict(importances)
        )
    features = {name: int(shapes[name][0]) + int(shapes[name][1]) for name in importances}
    one_rank = sum(features.values())
    if budget is None:
        budget = base_rank * one_rank
    elif isinstance(budget, bool) or not isinstance(budget, int) or budget < one_rank:
        raise param_error("budget", owner, f"an integer >= {one_rank} (one rank per layer)", budget)
    if softmax:
        if not temperature > 0:
            raise param_error("temperature", owner, "positive", temperature)
        spread = values.max() - values.min()
        scaled = (values - values.min()) / spread if spread > 0 else torch.zeros_like(values)
        shares = torch.softmax(scaled / temperature, dim=0)
    else:
        shares = values / values.sum()
    ranks = {}
    for (name, feats), share in zip(features.items(), shares.tolist(), strict=True):
        # 12 digits drop float noise so that e.g. 7.999999999999 floors to 8, not 7.
        raw = round_fn(round(budget * share / feats, 12))
        ranks[name] = int(min(max(raw, r_min), r_max))
    return ranks
