r"""RankSEG-RMA decisions: :func:`rma_predict` and the estimator-style :class:`RankSEGRMA`.

Per image and class: RMA volume :math:`\tau^*` (see :mod:`rmaseg.rma`), the top-:math:`\tau^*`
pixels as the mask, emptied when :math:`\max_j p_j \le` ``pruning_prob``. ``"multilabel"``
returns those masks; ``"multiclass"`` resolves them into one label per pixel by increment
scores (see :mod:`rmaseg.multiclass`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from paperkit import Described, check_choice, check_int, check_real, describe, param_error
from rmaseg.multiclass import UNASSIGNED_POLICIES, resolve_overlaps
from rmaseg.probabilities import METRICS, as_probs
from rmaseg.rma import SOLVERS, dinkelbach_masks, sort_masks

__all__ = ["OUTPUT_MODES", "RankSEGRMA", "rma_predict"]

#: Overlapping masks per class, or one label per pixel.
OUTPUT_MODES = ("multiclass", "multilabel")
#: Tolerance on :math:`|\sum_c p_c - 1|` for multiclass input (or the dtype's epsilon if larger).
SIMPLEX_ATOL = 1e-3


def rma_predict(
    probs: torch.Tensor | np.ndarray,
    metric: str = "dice",
    output_mode: str = "multiclass",
    smooth: float = 0.0,
    pruning_prob: float = 0.5,
    solver: str = "sort",
    unassigned_policy: str = "max_score",
    void_index: int = 255,
) -> torch.Tensor | np.ndarray:
    r"""RankSEG-RMA segmentation of a batch of probability maps.

    Args:
        probs: (B, C, \*spatial) probabilities in [0, 1], torch (CPU or CUDA) or numpy. For
            ``"multiclass"`` the C >= 2 channels must sum to 1 per pixel (within 1e-3, or the
            dtype's machine epsilon if larger, as for bfloat16).
        metric: ``"dice"`` or ``"iou"``: the metric whose RMA surrogate is maximised.
        output_mode: ``"multiclass"`` (int64 labels (B, \*spatial)) or ``"multilabel"``
            (bool masks (B, C, \*spatial)).
        smooth: :math:`s \ge 0` of the smoothed metric :math:`(2|I \cap Y| + s)/(|I|+|Y|+s)`.
        pruning_prob: a class whose largest probability is <= this is not predicted.
        solver: ``"sort"`` (O(d log d)) or ``"linear"`` (Dinkelbach, O(d) per iteration,
            ``smooth == 0`` only). Both return the smallest RMA-optimal top-tau mask.
        unassigned_policy: ``"max_score"`` or ``"void"`` (multiclass only).
        void_index: label of unselected pixels under ``"void"``; outside [0, C).

    Returns:
        Same array type and device as ``probs``.

    Shapes:
        probs: (B, C, \*spatial), any number of spatial dimensions, B may be 0. Returns bool
        (B, C, \*spatial) (``"multilabel"``) or int64 (B, \*spatial) (``"multiclass"``).

    NaN or inf in ``probs`` is refused (ValueError), as are values outside [0, 1]; integer and
    boolean arrays are a TypeError.

    >>> rma_predict(np.array([[[0.9, 0.6, 0.1]]]), output_mode="multilabel")
    array([[[ True,  True, False]]])
    """
    owner = "rma_predict"
    x, was_numpy = as_probs(probs, owner)
    metric = check_choice("metric", owner, metric, METRICS)
    output_mode = check_choice("output_mode", owner, output_mode, OUTPUT_MODES)
    smooth = check_real("smooth", owner, smooth, low=0)
    pruning_prob = check_real("pruning_prob", owner, pruning_prob, low=0, high=1)
    solver = check_choice("solver", owner, solver, SOLVERS)
    unassigned_policy = check_choice(
        "unassigned_policy", owner, unassigned_policy, UNASSIGNED_POLICIES
    )
    void_index = check_int("void_index", owner, void_index)
    if solver == "linear" and smooth > 0:
        raise param_error("smooth", owner, "0 with solver='linear'", smooth)
    B, C, *spatial = x.shape
    if output_mode == "multiclass":
        if C < 2:
            raise param_error(
                "probs",
                owner,
                "of C >= 2 channels for output_mode='multiclass' (use 'multilabel' for one)",
                describe(x),
            )
        if unassigned_policy == "void" and 0 <= void_index < C:
            raise param_error("void_index", owner, f"outside the class range [0, {C})", void_index)
        if x.numel():
            gap = float((x.sum(dim=1, dtype=torch.float64) - 1).abs().max())
            if gap > max(SIMPLEX_ATOL, torch.finfo(x.dtype).eps):
                raise param_error(
                    "probs",
                    owner,
                    "normalised over classes (sum_c p_c = 1) for output_mode='multiclass'",
                    Described(f"channel sums off by up to {gap:.3g}"),
                )
    flat = x.reshape(B, C, math.prod(spatial))
    if solver == "linear":
        masks, _, _ = dinkelbach_masks(flat, metric)
    else:
        masks, _ = sort_masks(flat, metric, smooth)
    active = flat.amax(dim=-1) > pruning_prob
    masks &= active.unsqueeze(-1)
    if output_mode == "multilabel":
        out = masks.reshape(B, C, *spatial)
    else:
        labels = resolve_overlaps(
            flat, masks, active, metric, smooth, unassigned_policy, void_index
        )
        out = labels.reshape(B, *spatial)
    return out.cpu().numpy() if was_numpy else out


class RankSEGRMA:
    """Estimator-style wrapper of :func:`rma_predict`, mirroring ``rankseg.RankSEG``.

    The options are checked here, once; ``predict(probs)`` takes (B, C, *spatial)
    probabilities and returns what :func:`rma_predict` returns (NaN and inf refused).

    >>> import torch
    >>> probs = torch.softmax(torch.randn(2, 3, 8, 8), dim=1)
    >>> RankSEGRMA(metric="iou").predict(probs).shape
    torch.Size([2, 8, 8])
    """

    def __init__(
        self,
        metric: str = "dice",
        output_mode: str = "multiclass",
        smooth: float = 0.0,
        pruning_prob: float = 0.5,
        solver: str = "sort",
        **solver_params: Any,
    ) -> None:
        owner = "RankSEGRMA"
        self.metric = check_choice("metric", owner, metric, METRICS)
        self.output_mode = check_choice("output_mode", owner, output_mode, OUTPUT_MODES)
        self.smooth = check_real("smooth", owner, smooth, low=0)
        self.pruning_prob = check_real("pruning_prob", owner, pruning_prob, low=0, high=1)
        self.solver = check_choice("solver", owner, solver, SOLVERS)
        if self.solver == "linear" and self.smooth > 0:
            raise param_error("smooth", owner, "0 with solver='linear'", self.smooth)
        unknown = sorted(set(solver_params) - {"unassigned_policy", "void_index"})
        if unknown:
            raise param_error(
                "solver_params",
                owner,
                "'unassigned_policy' or 'void_index'",
                unknown,
                cls=TypeError,
            )
        if "unassigned_policy" in solver_params:
            check_choice(
                "unassigned_policy", owner, solver_params["unassigned_policy"], UNASSIGNED_POLICIES
            )
        if "void_index" in solver_params:
            check_int("void_index", owner, solver_params["void_index"])
        self.solver_params = solver_params

    def predict(self, probs: torch.Tensor | np.ndarray) -> torch.Tensor | np.ndarray:
        """Decisions for (B, C, *spatial) probabilities; shapes, checks and NaN policy as
        :func:`rma_predict` (errors name ``rma_predict``'s argument ``probs``)."""
        return rma_predict(
            probs,
            metric=self.metric,
            output_mode=self.output_mode,
            smooth=self.smooth,
            pruning_prob=self.pruning_prob,
            solver=self.solver,
            **self.solver_params,
        )

    __call__ = predict

    def __repr__(self) -> str:
        return (
            f"RankSEGRMA(metric={self.metric!r}, output_mode={self.output_mode!r}, "
            f"smooth={self.smooth}, pruning_prob={self.pruning_prob}, solver={self.solver!r})"
        )
