import itertools

import numpy as np
import pytest
import torch

from paperkit.testing import assert_param_error, check_seeded_determinism
from rmaseg import optimal_tau, rma_objective, rma_predict
from rmaseg.rma import dinkelbach_masks, rma_curve, sort_masks


@pytest.mark.parametrize("metric", ["dice", "iou"])
@pytest.mark.parametrize("smooth", [0.0, 1.0])
def test_brute_force_over_all_subsets(metric, smooth, random_probs):
    """The mask maximising rma_objective over all 2^d subsets is rma_predict's mask,
    and it is a top-tau set (brute force, d <= 10)."""
    for seed, d in enumerate([1, 3, 6, 10, 10, 10]):
        p = random_probs(d, seed=seed)
        subsets = [np.array(bits, dtype=bool) for bits in itertools.product([0, 1], repeat=d)]
        values = [rma_objective(p, torch.from_numpy(m), metric, smooth) for m in subsets]
        best = max(values)
        # the smallest of the optimal subsets (ties broken towards the smaller volume)
        winners = [m for m, v in zip(subsets, values, strict=True) if v >= best - 1e-12]
        brute = min(winners, key=lambda m: m.sum())
        ours = rma_predict(p.view(1, 1, d), metric, "multilabel", smooth, pruning_prob=0.0)
        assert np.array_equal(ours.view(d).numpy(), brute), (seed, metric, smooth)
        k = int(brute.sum())
        top = torch.argsort(p, descending=True)[:k]
        assert set(top.tolist()) == set(np.flatnonzero(brute).tolist())  # a top-tau set


def test_curve_matches_closed_form(random_probs):
    p = random_probs(7, seed=3)
    s = torch.sort(p, descending=True).values
    P = float(p.sum())
    curve_d, curve_j = rma_curve(s, "dice", 0.5), rma_curve(s, "iou", 0.5)
    for tau in range(8):
        S = float(s[:tau].sum())
        if tau == 0:  # s / (P + s)
            dice_ref = iou_ref = 0.5 / (P + 0.5)
        else:  # the closed forms of rma_value (module docstring of rmaseg.rma)
            dice_ref = 2 * S / (P + tau + 1.5) + 0.5 / (P + tau + 0.5)
            iou_ref = (S + 0.5) / (P - S + tau + 0.5)
        assert abs(float(curve_d[tau]) - dice_ref) < 1e-14
        assert abs(float(curve_j[tau]) - iou_ref) < 1e-14


@pytest.mark.parametrize("metric", ["dice", "iou"])
def test_linear_solver_equals_sort_solver(metric):
    """solver='linear' == solver='sort' on 200 maps of 10^4 pixels (continuous p)."""
    g = torch.Generator().manual_seed(1)
    p = torch.rand(20, 10, 10_000, generator=g, dtype=torch.float64) ** torch.linspace(
        0.3, 6, 10, dtype=torch.float64
    ).view(1, 10, 1)
    masks_sort, tau_sort = sort_masks(p, metric)
    masks_lin, tau_lin, iterations = dinkelbach_masks(p, metric)
    assert torch.equal(masks_lin, masks_sort)
    assert torch.equal(tau_lin, tau_sort)
    assert 1 < iterations < 15  # never the fallback
    assert torch.equal(optimal_tau(p, metric, solver="linear"), tau_sort)


@pytest.mark.parametrize("metric", ["dice", "iou"])
def test_solvers_agree_in_value_under_heavy_ties(metric):
    """p quantised to 0.1; both solvers reach the same RMA value."""
    g = torch.Generator().manual_seed(2)
    p = (torch.rand(8, 4, 500, generator=g, dtype=torch.float64) * 10).round() / 10
    masks_sort, _ = sort_masks(p, metric)
    masks_lin, _, _ = dinkelbach_masks(p, metric)
    for b, c in itertools.product(range(8), range(4)):
        v_sort = rma_objective(p[b, c], masks_sort[b, c], metric)
        v_lin = rma_objective(p[b, c], masks_lin[b, c], metric)
        assert abs(v_sort - v_lin) <= 1e-12 * max(1.0, abs(v_sort))


def test_linear_solver_float32_threshold_is_exact():
    """A float32 map: the Dinkelbach threshold compared in float32 must not drift by rounding."""
    g = torch.Generator().manual_seed(5)
    p = torch.rand(4, 3, 20_000, generator=g) ** 2
    assert torch.equal(dinkelbach_masks(p, "dice")[0], sort_masks(p, "dice")[0])
    assert torch.equal(dinkelbach_masks(p, "iou")[0], sort_masks(p, "iou")[0])


def test_optimal_tau_values_and_errors(random_probs):
    p = random_probs(2, 3, 50, seed=4)
    tau = optimal_tau(p, "iou")
    assert tau.shape == (2, 3) and tau.dtype == torch.int64
    curve = rma_curve(torch.sort(p, descending=True).values, "iou")
    assert torch.equal(tau, curve.argmax(-1))
    assert_param_error(optimal_tau, p[0], param="probs")
    assert_param_error(optimal_tau, p, "dice", 1.0, "linear", param="smooth")
    assert_param_error(optimal_tau, p, solver="heap", param="solver")


def test_rma_objective_errors(random_probs):
    p = random_probs(5)
    assert_param_error(rma_objective, p, torch.ones(5), param="mask", exc=TypeError)
    assert_param_error(rma_objective, p, torch.ones(4, dtype=torch.bool), param="mask")
    assert_param_error(rma_objective, p, torch.ones(5, dtype=torch.bool), "acc", param="metric")
    # empty mask with s = 0 scores 0 (0/0 := 0 when P = 0 too)
    assert rma_objective(torch.zeros(5, dtype=torch.float64), torch.zeros(5, dtype=torch.bool)) == 0


def test_seeded_determinism():
    check_seeded_determinism(lambda: rma_predict(torch.softmax(torch.randn(2, 3, 9, 9), 1)))


@pytest.mark.parametrize("metric", ["dice", "iou"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_compiled_solver_matches_the_torch_solver(dtype, metric):
    """The linear solver's compiled CPU loop (a rough read first, masks written by the exact
    reads) and its torch loop (thresholds floored to the input dtype) give the same masks and
    sizes; neither falls back to sorting."""
    from rmaseg.rma import _dinkelbach_compiled, _dinkelbach_torch

    gen = torch.Generator().manual_seed(3)
    flat = (torch.rand(6, 10_001, generator=gen) ** 3).to(dtype)
    flat[1] = 0.0  # an empty map
    flat[2, :5000] = 1.0  # a saturated half
    masks_c, count_c, it_c = _dinkelbach_compiled(flat, metric)
    masks_t, count_t, it_t = _dinkelbach_torch(flat, metric)
    assert torch.equal(masks_c, masks_t) and torch.equal(count_c, count_t)
    assert 1 < it_c < 15 and 1 < it_t < 15
    assert torch.equal(masks_c.sum(-1), count_c)
