"""The bit allocation: one integer linear program (the paper's "single-pass linear
programming"), solved by ``scipy.optimize.milp`` (HiGHS).

Binary :math:`x_{l,b}` choose one bit-width b per layer l (:math:`\\sum_b x_{l,b} = 1`); with
:math:`t_l = TE_l / \\sum_k TE_k`,

.. math::
    \\max_x \\sum_l \\sum_b x_{l,b}\\, t_l\\, b \\quad \\text{s.t.}\\quad
    \\sum_{l,b} x_{l,b} P_l b \\le \\text{budget\\_bits},\\quad
    \\sum_{l,b} x_{l,b}\\, \\text{BOPs}_l\\, b\\, a \\le \\text{budget\\_bops},

where :math:`P_l` is the number of weights of layer l, :math:`\\text{BOPs}_l` its
multiply-accumulates per image and a the activation bits. Higher TE gets more bits
(``higher_te_more_bits=True``); ``False`` mirrors the scores
(:math:`t'_l = \\max t + \\min t - t_l`). ``fixed`` pins layers to a bit-width.
``objective="weighted_bits"`` (an alternative reading, not the default) maximises
:math:`\\sum_{l,b} x_{l,b}\\, t_l\\, b\\, P_l / \\sum_k P_k` instead: the gain of a bit then grows
with the layer's size as its cost does, so the ILP ranks layers by :math:`t_l` alone rather than
by :math:`t_l / P_l`. The LP relaxation (:math:`0 \\le x \\le 1`) bounds the optimum from above.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from paperkit import check_bool, check_choice, check_int, check_real, param_error

__all__ = ["DEFAULT_BITS", "OBJECTIVES", "policy_bits", "solve_bit_allocation"]

#: The candidate bit-widths.
DEFAULT_BITS = (2, 3, 4, 5, 6, 8)
#: The ILP's gain per layer and bit: ``t_l b`` (default) or ``t_l b P_l / sum P``.
OBJECTIVES = ("bits", "weighted_bits")


def check_bit_choices(owner: str, bit_choices: Any) -> tuple[int, ...]:
    """A non-empty sequence of distinct integers in [1, 32], sorted."""
    if isinstance(bit_choices, (str, bytes)) or not isinstance(bit_choices, (list, tuple)):
        raise param_error(
            "bit_choices",
            owner,
            "a sequence of integers",
            type(bit_choices).__name__,
            cls=TypeError,
        )
    if len(bit_choices) == 0:
        raise param_error("bit_choices", owner, "a non-empty sequence of integers", "()")
    bits = [check_int("bit_choices", owner, b, low=1, high=32) for b in bit_choices]
    return tuple(sorted(set(bits)))


def check_scores(
    name: str, owner: str, scores: Any, *, low: float | None = 0.0
) -> dict[str, float]:
    """A non-empty mapping of layer name to a finite real score (>= ``low``)."""
    if not isinstance(scores, Mapping):
        raise param_error(
            name, owner, "a dict of layer name -> number", type(scores).__name__, cls=TypeError
        )
    if not scores:
        raise param_error(name, owner, "a non-empty dict of layer name -> number", "{}")
    return {str(k): check_real(name, owner, v, low=low) for k, v in scores.items()}


def _same_keys(name: str, owner: str, values: Mapping[str, Any], layers: Sequence[str]) -> None:
    if set(values) != set(layers):
        raise param_error(
            name, owner, f"a dict with exactly the layers {list(layers)}", sorted(values)
        )


def allocate(
    owner: str,
    gains: Mapping[str, Mapping[int, float]],
    n_params: Mapping[str, float],
    budget_bits: float,
    bops: Mapping[str, float] | None = None,
    budget_bops: float | None = None,
    a_bits: int = 8,
) -> tuple[dict[str, int], dict[str, float]]:
    """Maximise :math:`\\sum_{l,b} x_{l,b}\\, \\text{gains}[l][b]` under the size (and BitOps)
    budget, one bit-width per layer among the keys of ``gains[l]``. Arguments are checked by the
    caller. Returns the policy and ``{"objective", "lp_bound", "cost_bits", "cost_bops",
    "solve_s"}``; raises the worded ValueError for an infeasible budget."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    layers = list(gains)
    cols = [(l, b) for l in layers for b in sorted(gains[l])]
    c = -np.array([gains[l][b] for l, b in cols], dtype=np.float64)
    one_hot = np.array([[1.0 if cl == l else 0.0 for cl, _ in cols] for l in layers])
    size = np.array([[n_params[l] * b for l, b in cols]])
    least = sum(n_params[l] * min(gains[l]) for l in layers)
    if least > budget_bits * (1 + 1e-12):
        raise param_error(
            "budget_bits",
            owner,
            f"at least {least:g} bits (every layer at its fewest bits)",
            budget_bits,
        )
    constraints = [LinearConstraint(one_hot, 1, 1), LinearConstraint(size, -np.inf, budget_bits)]
    if bops is not None and budget_bops is not None:
        ops = np.array([[bops[l] * b * a_bits for l, b in cols]])
        least_ops = sum(bops[l] * min(gains[l]) * a_bits for l in layers)
        if least_ops > budget_bops * (1 + 1e-12):
            raise param_error("budget_bops", owner, f"at least {least_ops:g} BitOps", budget_bops)
        constraints.append(LinearConstraint(ops, -np.inf, budget_bops))
    start = time.perf_counter()
    result = milp(c, constraints=constraints, integrality=np.ones_like(c), bounds=Bounds(0, 1))
    solve_s = time.perf_counter() - start
    if result.status != 0 or result.x is None:  # pragma: no cover - HiGHS failing on a feasible ILP
        raise RuntimeError(f"milp failed: {result.message}")
    relaxed = milp(c, constraints=constraints, integrality=np.zeros_like(c), bounds=Bounds(0, 1))
    x = np.round(result.x).astype(int)
    policy = {l: b for (l, b), xi in zip(cols, x, strict=True) if xi == 1}
    info = {
        "objective": float(-result.fun),
        "lp_bound": float(-relaxed.fun),
        "cost_bits": float(sum(n_params[l] * b for l, b in policy.items())),
        "cost_bops": float(sum(bops[l] * b * a_bits for l, b in policy.items())) if bops else 0.0,
        "solve_s": solve_s,
    }
    return policy, info


def solve_bit_allocation(
    te: Mapping[str, float],
    n_params: Mapping[str, float],
    budget_bits: float,
    bit_choices: Sequence[int] = DEFAULT_BITS,
    bops: Mapping[str, float] | None = None,
    budget_bops: float | None = None,
    fixed: Mapping[str, int] | None = None,
    *,
    higher_te_more_bits: bool = True,
    objective: str = "bits",
    a_bits: int = 8,
    return_info: bool = False,
) -> dict[str, int] | tuple[dict[str, int], dict[str, float]]:
    """The GMPQ-TE policy: the ILP of this module on the normalised TE :math:`t_l`.

    Args:
        te: ``{layer: TE_l}``, non-negative (all zero: every layer scores alike).
        n_params: ``{layer: P_l}``, the weights of each layer (same keys as ``te``).
        budget_bits: the model-size budget in bits, :math:`\\sum_l P_l b_l \\le` budget_bits
            (e.g. 3 x the total weights for an average of 3 bits).
        bit_choices: candidate bit-widths (integers >= 1, non-empty).
        bops, budget_bops: ``{layer: MACs per image}`` and the BitOps budget (optional, both or
            neither); a layer at b bits costs :math:`\\text{BOPs}_l\\, b\\, a`.
        fixed: ``{layer: bits}`` pinned (e.g. the first and last layers at 8 bits).
        higher_te_more_bits: the direction of the rule (see the module docstring).
        objective: ``"bits"`` (gain :math:`t_l b`) or ``"weighted_bits"`` (gain
            :math:`t_l b P_l / \\sum_k P_k`), see the module docstring.
        a_bits: activation bits a in the BitOps cost.
        return_info: also return ``{"objective", "lp_bound", "cost_bits", "cost_bops",
            "solve_s"}``.

    Returns ``{layer: bits}``. Raises ValueError when even the fewest bits exceed a budget.
    NaN policy: NaN or infinite scores, sizes and budgets are refused.

    >>> solve_bit_allocation({"a": 1.0, "b": 3.0}, {"a": 10, "b": 10}, budget_bits=80,
    ...                      bit_choices=(2, 4, 6))
    {'a': 2, 'b': 6}
    """
    owner = "solve_bit_allocation"
    scores = check_scores("te", owner, te)
    layers = list(scores)
    sizes = check_scores("n_params", owner, n_params, low=0)
    _same_keys("n_params", owner, sizes, layers)
    budget_bits = check_real("budget_bits", owner, budget_bits, low=0)
    bits = check_bit_choices(owner, bit_choices)
    higher = check_bool("higher_te_more_bits", owner, higher_te_more_bits)
    check_choice("objective", owner, objective, OBJECTIVES)
    a_bits = check_int("a_bits", owner, a_bits, low=1, high=32)
    check_bool("return_info", owner, return_info)
    ops, budget_ops = _check_bops(owner, bops, budget_bops, layers)
    pinned = _check_fixed(owner, fixed, layers)
    total = sum(scores.values())
    t = {l: (v / total if total > 0 else 1.0 / len(layers)) for l, v in scores.items()}
    if not higher:
        hi, lo = max(t.values()), min(t.values())
        t = {l: hi + lo - v for l, v in t.items()}
    total_size = sum(sizes.values())
    weight = {
        l: (sizes[l] / total_size if objective == "weighted_bits" and total_size > 0 else 1.0)
        for l in layers
    }
    gains = {
        l: {b: t[l] * weight[l] * b for b in ((pinned[l],) if l in pinned else bits)}
        for l in layers
    }
    policy, info = allocate(owner, gains, sizes, budget_bits, ops, budget_ops, a_bits)
    return (policy, info) if return_info else policy


def _check_bops(
    owner: str, bops: Any, budget_bops: Any, layers: Sequence[str]
) -> tuple[dict[str, float] | None, float | None]:
    if bops is None and budget_bops is None:
        return None, None
    if budget_bops is None:
        raise param_error("bops", owner, "None unless budget_bops is given", "a dict")
    if bops is None:
        raise param_error("budget_bops", owner, "None unless bops is given", budget_bops)
    ops = check_scores("bops", owner, bops, low=0)
    _same_keys("bops", owner, ops, layers)
    return ops, check_real("budget_bops", owner, budget_bops, low=0)


def _check_fixed(owner: str, fixed: Any, layers: Sequence[str]) -> dict[str, int]:
    if fixed is None:
        return {}
    if not isinstance(fixed, Mapping):
        raise param_error(
            "fixed",
            owner,
            "a dict of layer name -> bits or None",
            type(fixed).__name__,
            cls=TypeError,
        )
    for name in fixed:
        if name not in layers:
            raise param_error("fixed", owner, f"layer names among {list(layers)}", name)
    return {l: check_int("fixed", owner, b, low=1, high=32) for l, b in fixed.items()}


def policy_bits(policy: Mapping[str, int], n_params: Mapping[str, float]) -> float:
    """The weight-count-weighted average bit-width :math:`\\sum_l P_l b_l / \\sum_l P_l`.

    NaN policy: NaN sizes are refused.

    >>> policy_bits({"a": 2, "b": 8}, {"a": 30, "b": 10})
    3.5
    """
    owner = "policy_bits"
    sizes = check_scores("n_params", owner, n_params, low=0)
    if not isinstance(policy, Mapping) or not policy:
        raise param_error(
            "policy", owner, "a non-empty dict of layer name -> bits", policy, cls=TypeError
        )
    _same_keys("policy", owner, policy, list(sizes))
    bits = {l: check_int("policy", owner, b, low=1, high=32) for l, b in policy.items()}
    total = sum(sizes.values())
    if total <= 0:
        raise param_error("n_params", owner, "a positive total number of weights", total)
    return float(sum(sizes[l] * bits[l] for l in sizes) / total)
