r"""Non-overlapping (multiclass) labels from per-class RMA masks through increment scores.

Per image, class masks :math:`O_c` may overlap or leave pixels unselected. With
:math:`U_c = \{j : O_c[j], \sum_{c'} O_{c'}[j] = 1\}` (pixels no other class claims),
:math:`\mu_c = \sum_{j \in U_c} p_c[j]`, :math:`t_c = |U_c|`, :math:`P_c = \sum_j p_c[j]`, the
increment score of giving pixel :math:`j` to class :math:`c` is the change of the RMA objective
of :math:`U_c` when :math:`j` joins it:

.. math::

    \Delta^{Dice}_c[j] = \frac{2(\mu_c + p_c[j])}{t_c + P_c + 2 + s} + \frac{s}{t_c + P_c + 1 + s}
        - \frac{2\mu_c}{t_c + P_c + 1 + s} - \frac{s}{t_c + P_c + s},

    \Delta^{IoU}_c[j] = \frac{\mu_c + p_c[j] + s}{t_c + P_c - \mu_c - p_c[j] + 1 + s}
        - \frac{\mu_c + s}{t_c + P_c - \mu_c + s} \quad (0/0 := 0).

Pixels claimed by one class keep it, overlapped pixels take the best-scoring claimant, and
unclaimed pixels take the best active class (``"max_score"``) or ``void_index`` (``"void"``).
Ties go to the lowest class index.
"""

from __future__ import annotations

import numpy as np
import torch

from paperkit import check_choice, check_real, check_tensor, describe, param_error
from rmaseg.probabilities import METRICS, as_probs

__all__ = ["UNASSIGNED_POLICIES", "increment_scores", "resolve_overlaps"]

#: What happens to pixels no class selected.
UNASSIGNED_POLICIES = ("max_score", "void")


def increment_scores(
    probs: torch.Tensor | np.ndarray,
    masks: torch.Tensor | np.ndarray,
    metric: str,
    smooth: float = 0.0,
) -> torch.Tensor:
    r"""The increments :math:`\Delta_c[j]` above, float64 (B, C, D).

    Shapes: probs (B, C, D) probabilities, masks bool (B, C, D) (torch or numpy). NaN, inf and
    values outside [0, 1] in ``probs`` are refused (ValueError).

    >>> increment_scores(np.array([[[0.5, 0.5]]]), np.array([[[True, False]]]), "iou")
    tensor([[[0.1667, 0.1667]]], dtype=torch.float64)
    """
    owner = "increment_scores"
    x, _ = as_probs(probs, owner, ndim=3)
    if not isinstance(masks, (np.ndarray, torch.Tensor)):
        raise param_error("masks", owner, "a boolean array", describe(masks), cls=TypeError)
    m = torch.as_tensor(masks, device=x.device)
    check_tensor("masks", owner, m, ndim=3, dtype="bool", finite=False, nonempty=False)
    if m.shape != x.shape:  # the message names both: either may be the odd one
        raise param_error("masks", owner, f"of the shape of 'probs' {tuple(x.shape)}", describe(m))
    metric = check_choice("metric", owner, metric, METRICS)
    smooth = check_real("smooth", owner, smooth, low=0)
    return _increments(x, m, metric, smooth)


def _increments(
    probs: torch.Tensor, masks: torch.Tensor, metric: str, smooth: float
) -> torch.Tensor:
    r""":func:`increment_scores` for checked inputs, written as factored differences (no
    subtraction of two nearly equal objectives): Dice :math:`2(p\,a - \mu)/(a(a+1)) -
    s/(a(a-1))` with :math:`a = t + P + 1 + s`; IoU :math:`(p - J_0 (1 - p)) / (b + 1 - p)` with
    :math:`b = t + P - \mu + s`, :math:`J_0 = (\mu + s)/b`."""
    p = probs.to(torch.float64)
    unique = masks & (masks.sum(dim=1, keepdim=True) == 1)
    mu = torch.where(unique, p, 0).sum(dim=-1, keepdim=True)
    t = unique.sum(dim=-1, keepdim=True).to(torch.float64)
    P = p.sum(dim=-1, keepdim=True)
    if metric == "dice":
        a = t + P + 1 + smooth
        delta = 2 * (p * a - mu) / (a * (a + 1))
        if smooth > 0:
            delta = delta - smooth / (a * (a - 1))
        return delta
    b = t + P - mu + smooth
    base = torch.where(b > 0, (mu + smooth) / torch.where(b > 0, b, 1), 0)
    return (p - base * (1 - p)) / (b + 1 - p)


def resolve_overlaps(
    probs: torch.Tensor,
    masks: torch.Tensor,
    active: torch.Tensor,
    metric: str,
    smooth: float = 0.0,
    unassigned_policy: str = "max_score",
    void_index: int = 255,
) -> torch.Tensor:
    """Labels (B, D) int64 from probabilities and masks (B, C, D) and active classes (B, C).

    Eligible classes of a pixel: those whose mask selected it; for unselected pixels, the
    active classes (every class when all were pruned). The label is the eligible class with the
    largest increment score; ``"void"`` writes ``void_index`` on unselected pixels instead.
    """
    delta = _increments(probs, masks, metric, smooth)
    selected = masks.any(dim=1)
    fallback = active | ~active.any(dim=1, keepdim=True)
    eligible = torch.where(selected.unsqueeze(1), masks, fallback.unsqueeze(-1))
    labels = torch.where(eligible, delta, float("-inf")).argmax(dim=1)
    if unassigned_policy == "void":
        labels = torch.where(selected, labels, torch.full_like(labels, void_index))
    return labels
