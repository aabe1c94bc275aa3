import itertools

import numpy as np
import pytest

from gmpqte import policy_bits, solve_bit_allocation
from paperkit.testing import assert_param_error

LAYERS = [f"l{i}" for i in range(5)]


def _problem(seed):
    rng = np.random.default_rng(seed)
    te = dict(zip(LAYERS, rng.random(5) + 0.1, strict=True))
    sizes = dict(zip(LAYERS, rng.integers(10, 1000, 5).astype(float), strict=True))
    return te, sizes


def _brute_force(te, sizes, budget, bits, bops=None, budget_bops=None, a_bits=8):
    """Enumerate all len(bits)^5 policies; the best objective sum t_l b_l among feasible ones."""
    total = sum(te.values())
    best = -np.inf
    for combo in itertools.product(bits, repeat=len(LAYERS)):
        cost = sum(sizes[l] * b for l, b in zip(LAYERS, combo, strict=True))
        if cost > budget:
            continue
        if bops is not None:
            ops = sum(bops[l] * b * a_bits for l, b in zip(LAYERS, combo, strict=True))
            if ops > budget_bops:
                continue
        best = max(best, sum(te[l] / total * b for l, b in zip(LAYERS, combo, strict=True)))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_ilp_equals_brute_force(seed):
    te, sizes = _problem(seed)
    bits = (2, 4, 8)
    budget = 4.2 * sum(sizes.values())
    policy, info = solve_bit_allocation(te, sizes, budget, bits, return_info=True)
    assert info["objective"] == pytest.approx(_brute_force(te, sizes, budget, bits), abs=1e-9)
    assert info["lp_bound"] >= info["objective"] - 1e-9
    assert set(policy) == set(LAYERS) and set(policy.values()) <= set(bits)


def test_ilp_with_bitops_equals_brute_force():
    te, sizes = _problem(11)
    bops = {l: s * 16 for l, s in sizes.items()}
    bits = (2, 3, 6)
    budget = 4.5 * sum(sizes.values())
    budget_bops = 3.0 * 8 * sum(bops.values())
    policy, info = solve_bit_allocation(
        te, sizes, budget, bits, bops=bops, budget_bops=budget_bops, return_info=True
    )
    brute = _brute_force(te, sizes, budget, bits, bops, budget_bops)
    assert info["objective"] == pytest.approx(brute, abs=1e-9)
    assert sum(bops[l] * b * 8 for l, b in policy.items()) <= budget_bops


def test_budget_respected_and_monotone():
    te, sizes = _problem(3)
    total = sum(sizes.values())
    last = -np.inf
    for avg in np.linspace(2.0, 8.0, 13):
        policy, info = solve_bit_allocation(te, sizes, avg * total, return_info=True)
        assert sum(sizes[l] * b for l, b in policy.items()) <= avg * total
        assert info["cost_bits"] <= avg * total
        assert info["objective"] >= last - 1e-12  # a larger budget never lowers the optimum
        last = info["objective"]
        assert policy_bits(policy, sizes) <= avg + 1e-12


def test_infeasible_and_negative_budget_are_refused():
    te, sizes = _problem(4)
    below_all_2_bit = 2 * sum(sizes.values()) - 1
    assert_param_error(solve_bit_allocation, te, sizes, below_all_2_bit, param="budget_bits")
    assert_param_error(solve_bit_allocation, te, sizes, -1.0, param="budget_bits")


def test_bad_bit_choices_are_refused():
    te, sizes = _problem(5)
    budget = 4 * sum(sizes.values())
    assert_param_error(solve_bit_allocation, te, sizes, budget, (), param="bit_choices")
    assert_param_error(solve_bit_allocation, te, sizes, budget, (0, 4), param="bit_choices")
    assert_param_error(solve_bit_allocation, te, sizes, budget, (-2, 4), param="bit_choices")


@pytest.mark.parametrize("seed", range(5))
def test_higher_te_gets_no_fewer_bits_at_equal_sizes(seed):
    rng = np.random.default_rng(seed)
    te = dict(zip(LAYERS, rng.random(5), strict=True))
    sizes = dict.fromkeys(LAYERS, 100.0)
    policy = solve_bit_allocation(te, sizes, rng.uniform(2.5, 7.0) * 500)
    order = sorted(LAYERS, key=te.get)
    bits = [policy[l] for l in order]
    assert bits == sorted(bits)
    reverse = solve_bit_allocation(te, sizes, 4.0 * 500, higher_te_more_bits=False)
    rbits = [reverse[l] for l in order]
    assert rbits == sorted(rbits, reverse=True)


def test_fixed_layers_and_weighted_objective():
    te, sizes = _problem(6)
    budget = 6 * sum(sizes.values())
    policy = solve_bit_allocation(te, sizes, budget, fixed={"l0": 8, "l4": 8})
    assert policy["l0"] == 8 and policy["l4"] == 8
    # weighted objective: the gain of a bit grows with P_l, so layers are ranked by TE alone
    flat = dict.fromkeys(LAYERS, 1.0)
    w = solve_bit_allocation(flat | {"l2": 5.0}, sizes, budget, (2, 8), objective="weighted_bits")
    assert w["l2"] == 8 or 8 * sizes["l2"] + 2 * (sum(sizes.values()) - sizes["l2"]) > budget


def test_mismatched_keys_are_refused():
    te, sizes = _problem(7)
    sizes.pop("l0")
    assert_param_error(solve_bit_allocation, te, sizes, 1e6, param="n_params")
