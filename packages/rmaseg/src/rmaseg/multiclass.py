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

import torch

__all__ = ["UNASSIGNED_POLICIES", "increment_scores", "resolve_overlaps"]

#: What happens to pixels no class selected.
UNASSIGNED_POLICIES = ("max_score", "void")


def increment_scores(
    probs: torch.Tensor, masks: torch.Tensor, metric: str, smooth: float = 0.0
) -> torch.Tensor:
    r"""The increments :math:`\Delta_c[j]` above, (B, C, D) -> float64 (B, C, D).

    Written as factored differences (no subtraction of two nearly equal objectives):
    Dice :math:`2(p\,a - \mu)/(a(a+1)) - s/(a(a-1))` with :math:`a = t + P + 1 + s`;
    IoU :math:`(p - J_0 (1 - p)) / (b + 1 - p)` with :math:`b = t + P - \mu + s`,
    :math:`J_0 = (\mu + s)/b`.
    """
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
    delta = increment_scores(probs, masks, metric, smooth)
    selected = masks.any(dim=1)
    fallback = active | ~active.any(dim=1, keepdim=True)
    eligible = torch.where(selected.unsqueeze(1), masks, fallback.unsqueeze(-1))
    labels = torch.where(eligible, delta, float("-inf")).argmax(dim=1)
    if unassigned_policy == "void":
        labels = torch.where(selected, labels, torch.full_like(labels, void_index))
    return labels
