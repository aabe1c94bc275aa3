r"""The fixed-ratio baselines: one keep schedule for every sequence, tokens ranked by accumulated
attention (PoWER-BERT / LTP's proxy), by the IG-trained importance predictors, or at random.

The schedule is geometric, :math:`r_k = \rho^k` of the original length at the :math:`k`-th
pruning layer (:func:`geometric_schedule`), and :func:`match_flops` finds the :math:`\rho` whose
mean FLOPs on a set of lengths equal a target, so a baseline runs at the FLOPs of AD-TP.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from adtp.flops import layer_flops
from adtp.model import PrunableEncoder, check_keep_ratios, keep_counts
from paperkit import check_choice, check_int, check_real, check_tensor, param_error

__all__ = ["FixedRatioPruner", "geometric_schedule", "match_flops"]

SCORE_OF = {"attention": "attention", "ig": "predictor", "random": "random"}


def geometric_schedule(rho: float, num_prune_layers: int) -> list[float]:
    r""":math:`[\rho, \rho^2, \dots, \rho^K]`.

    >>> geometric_schedule(0.5, 3)
    [0.5, 0.25, 0.125]
    """
    rho = check_real("rho", "geometric_schedule", rho, low=0, high=1, low_open=True)
    k = check_int("num_prune_layers", "geometric_schedule", num_prune_layers, low=1, high=1024)
    return [rho ** (i + 1) for i in range(k)]


def _mean_flops_ratio(rho: float, lengths: torch.Tensor, model: PrunableEncoder) -> float:
    ratios = torch.tensor(geometric_schedule(rho, len(model.prune_layers)), dtype=torch.float64)
    counts = keep_counts(ratios.expand(len(lengths), -1), lengths)
    tokens = model._tokens_per_layer(lengths, counts)
    full = layer_flops(lengths.double(), model.dim, model.ffn) * model.depth
    return float(layer_flops(tokens.double(), model.dim, model.ffn).sum(1).sum() / full.sum())


def match_flops(model: PrunableEncoder, lengths: torch.Tensor, target_ratio: float) -> float:
    r"""The :math:`\rho` of the geometric schedule whose total FLOPs over sequences of ``lengths``
    is ``target_ratio`` of the full model's (bisection; the counts are integers, so the match is
    as close as the rounding allows). NaN policy: refused."""
    owner = "match_flops"
    if not isinstance(model, PrunableEncoder):
        raise param_error("model", owner, "a PrunableEncoder", type(model).__name__, cls=TypeError)
    check_tensor("lengths", owner, lengths, ndim=1, dtype="int")
    if bool((lengths < 2).any()):
        raise param_error("lengths", owner, "lengths >= 2", "a shorter one")
    target_ratio = check_real("target_ratio", owner, target_ratio, low=0, high=1, low_open=True)
    lo, hi = 1e-4, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        if _mean_flops_ratio(mid, lengths, model) > target_ratio:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


class FixedRatioPruner:
    """Hard pruning with one ``keep_schedule`` (K ratios in (0, 1]) for every sequence; tokens
    ranked by ``score``: ``"attention"`` (accumulated attention of the previous layer), ``"ig"``
    (the model's IG-trained importance predictors) or ``"random"``.

    ``pruner(model, input_ids, attention_mask, seed=0)`` returns the output dict of
    ``model(..., mode="hard")``. NaN policy: NaN ratios are refused.
    """

    def __init__(self, score: str, keep_schedule: Sequence[float]) -> None:
        owner = "FixedRatioPruner"
        self.score = check_choice("score", owner, score, tuple(SCORE_OF))
        k = (
            len(keep_schedule)
            if isinstance(keep_schedule, Sequence) and not isinstance(keep_schedule, str)
            else 0
        )
        if k == 0:
            raise param_error(
                "keep_schedule", owner, "a non-empty sequence of ratios", keep_schedule
            )
        self.keep_schedule = [
            float(r) for r in check_keep_ratios(keep_schedule, 1, k, owner, "keep_schedule")[0]
        ]

    def __call__(
        self,
        model: PrunableEncoder,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        seed: int = 0,
    ) -> dict[str, Any]:
        owner = "FixedRatioPruner"
        if not isinstance(model, PrunableEncoder):
            raise param_error(
                "model", owner, "a PrunableEncoder", type(model).__name__, cls=TypeError
            )
        if len(model.prune_layers) != len(self.keep_schedule):
            raise param_error(
                "model", owner, f"{len(self.keep_schedule)} pruning layers", len(model.prune_layers)
            )
        return model(
            input_ids,
            attention_mask,
            "hard",
            self.keep_schedule,
            score=SCORE_OF[self.score],
            seed=seed,
        )
