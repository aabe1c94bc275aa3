import pytest
import torch

from gora import allocate_ranks, importance_scores, lora_budget
from paperkit.testing import assert_param_error

SQUARE = {f"l{i}": (64, 64) for i in range(4)}


def test_equal_importance_and_shapes_give_the_reference_rank():
    for rounding in ("round", "floor", "ceil"):
        ranks = allocate_ranks(dict.fromkeys(SQUARE, 0.3), SQUARE, base_rank=8, rounding=rounding)
        assert ranks == dict.fromkeys(SQUARE, 8)


def test_doubling_one_importance_raises_only_that_layer():
    # Shares 2/5, 1/5, 1/5, 1/5 of a budget of 4 * 8 ranks: round(12.8) = 13, round(6.4) = 6.
    ranks = allocate_ranks({"l0": 2.0, "l1": 1.0, "l2": 1.0, "l3": 1.0}, SQUARE, base_rank=8)
    assert list(ranks.values()) == [13, 6, 6, 6]


def test_budget_is_kept_within_one_layer_when_no_clamp_is_active():
    shapes = {"a": (64, 32), "b": (128, 64), "c": (32, 32), "d": (256, 64)}
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        imp = dict(zip(shapes, (0.5 + torch.rand(4, generator=gen)).tolist(), strict=True))
        ranks = allocate_ranks(imp, shapes, base_rank=8, r_min=0, r_max=10_000)
        used, budget = lora_budget(shapes, ranks), lora_budget(shapes, 8)
        assert abs(used - budget) <= max(m + n for m, n in shapes.values())


def test_clamps_are_respected_and_rank_zero_needs_r_min_zero():
    imp = {"l0": 100.0, "l1": 1.0, "l2": 1e-6, "l3": 1.0}
    ranks = allocate_ranks(imp, SQUARE, base_rank=8, r_min=4, r_max=16)
    assert ranks["l0"] == 16 and ranks["l2"] == 4 and min(ranks.values()) >= 4
    free = allocate_ranks(imp, SQUARE, base_rank=8, r_min=0, r_max=64)
    assert free["l2"] == 0 and free["l0"] > 16


def test_rounding_modes_order_and_explicit_budget():
    imp = {"l0": 3.0, "l1": 1.0, "l2": 1.0, "l3": 1.0}  # raw ranks 16, 5.33, 5.33, 5.33
    floor = allocate_ranks(imp, SQUARE, 8, 0, 64, "floor")
    ceil = allocate_ranks(imp, SQUARE, 8, 0, 64, "ceil")
    assert list(floor.values()) == [16, 5, 5, 5] and list(ceil.values()) == [16, 6, 6, 6]
    ranks = allocate_ranks(imp, SQUARE, 8, 0, 64, budget=4 * 128 * 2)  # two ranks per layer
    assert list(ranks.values()) == [4, 1, 1, 1]


def test_softmax_shares_favour_the_most_important_layer():
    imp = {"l0": 3.0, "l1": 2.0, "l2": 1.0, "l3": 1.0}
    ranks = allocate_ranks(imp, SQUARE, 8, 0, 64, softmax=True, temperature=0.5)
    assert ranks["l0"] > ranks["l1"] > ranks["l2"] == ranks["l3"]


def test_importance_kinds_match_their_definitions():
    gen = torch.Generator().manual_seed(1)
    W, G = torch.randn(12, 7, generator=gen), torch.randn(12, 7, generator=gen)
    got = {k: importance_scores({"x": W}, {"x": G}, k)["x"] for k in ("mean_abs_wg", "fro_wg")}
    assert got["mean_abs_wg"] == pytest.approx(float((W * G).abs().mean()), rel=1e-6)
    assert got["fro_wg"] == pytest.approx(float((W * G).pow(2).sum().sqrt()), rel=1e-6)
    nuc = importance_scores({"x": W}, {"x": G}, "nuc_g")["x"]
    assert nuc == pytest.approx(float(torch.linalg.svdvals(G).sum()), rel=1e-5)
    W2, G2 = torch.randn(40, 36, generator=gen), torch.randn(40, 36, generator=gen)
    low = importance_scores({"x": W2}, {"x": G2}, "nuc_wg_lowrank")["x"]
    exact = importance_scores({"x": W2}, {"x": G2}, "nuc_wg")["x"]
    assert 0.8 * exact < low <= exact * (1 + 1e-5)  # the top 32 of 36 singular values


def test_allocation_errors():
    imp = dict.fromkeys(SQUARE, 1.0)
    assert_param_error(allocate_ranks, imp, SQUARE, param="r_min", r_min=8, r_max=4)
    assert_param_error(allocate_ranks, imp, SQUARE, param="base_rank", base_rank=0)
    assert_param_error(allocate_ranks, imp, SQUARE, param="rounding", rounding="up")
    assert_param_error(allocate_ranks, imp, {"l0": (4, 4)}, param="shapes")
    assert_param_error(allocate_ranks, {"l0": -1.0}, SQUARE, param="importances")
    # A budget below one rank per layer.
    assert_param_error(allocate_ranks, imp, SQUARE, param="budget", budget=4 * 128 - 1)
    assert_param_error(allocate_ranks, {"l0": float("nan")}, SQUARE, param="importances")
    assert_param_error(allocate_ranks, {"l0": float("inf")}, SQUARE, param="importances")
    for bad in ({**SQUARE, "l0": (0, 64)}, {**SQUARE, "l0": (64, 6.5)}, {**SQUARE, "l0": (64,)}):
        assert_param_error(allocate_ranks, imp, bad, param="shapes")
    assert_param_error(allocate_ranks, imp, [(64, 64)] * 4, param="shapes", exc=TypeError)


def test_budget_errors():
    assert lora_budget(SQUARE, dict.fromkeys(SQUARE, 2)) == 4 * 2 * 128
    assert_param_error(lora_budget, {"a": (-1, 4)}, 2, param="shapes")
    assert_param_error(lora_budget, {"a": (4, 4)}, -1, param="r")
    assert_param_error(lora_budget, {"a": (4, 4)}, 1.5, param="r", exc=TypeError)
    assert_param_error(lora_budget, {"a": (4, 4)}, {"b": 1}, param="r")


def test_importance_errors():
    W, G = torch.ones(3, 4), torch.ones(4, 3)
    assert_param_error(importance_scores, {"x": W}, {"x": G}, param="grads")
    assert_param_error(importance_scores, {}, {"x": W}, param="weights")
    assert_param_error(importance_scores, {"x": W}, {"x": W}, param="kind", kind="entropy")
