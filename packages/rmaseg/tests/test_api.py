import numpy as np
import pytest
import torch

from paperkit.testing import assert_param_error, requires_cuda
from rmaseg import RankSEGRMA, rma_predict


@pytest.mark.parametrize("metric", ["dice", "iou"])
@pytest.mark.parametrize("output_mode", ["multilabel", "multiclass"])
@pytest.mark.parametrize("solver", ["sort", "linear"])
def test_matches_the_anchor_package(metric, output_mode, solver, random_probs):
    """Equal to rankseg.RankSEG(metric, solver="RMA", output_mode, pruning_prob=0.5)."""
    rankseg = pytest.importorskip("rankseg")
    for seed in range(3):
        if output_mode == "multiclass":
            probs = random_probs(2, 3, 16, 16, seed=seed, softmax=True)
        else:
            probs = random_probs(2, 3, 16, 16, seed=seed, power=1.0)
        anchor = rankseg.RankSEG(
            metric=metric, solver="RMA", output_mode=output_mode, pruning_prob=0.5
        ).predict(probs)
        ours = rma_predict(probs, metric, output_mode, pruning_prob=0.5, solver=solver)
        assert ours.dtype == anchor.dtype and torch.equal(ours, anchor)


@pytest.mark.parametrize("smooth", [0.5, 3.0])
@pytest.mark.parametrize("policy", ["max_score", "void"])
def test_matches_the_anchor_with_smoothing_and_policies(smooth, policy, random_probs):
    rankseg = pytest.importorskip("rankseg")
    probs = random_probs(3, 4, 12, 12, seed=7, softmax=True)
    for metric in ("dice", "iou"):
        anchor = rankseg.RankSEG(
            metric=metric,
            smooth=smooth,
            solver="RMA",
            output_mode="multiclass",
            pruning_prob=0.3,
            unassigned_policy=policy,
        ).predict(probs)
        ours = rma_predict(probs, metric, "multiclass", smooth, 0.3, unassigned_policy=policy)
        assert torch.equal(ours, anchor)


def test_float32_maps_score_at_least_the_anchors_objective():
    """On large float32 maps the anchor sums probabilities in float32 and can stop at a
    slightly different tau; ours sums in float64, so its mask's RMA objective (in float64) is
    never below the anchor's. In float64 both masks are identical."""
    rankseg = pytest.importorskip("rankseg")
    from rmaseg import rma_objective

    anchor = rankseg.RankSEG(metric="dice", solver="RMA", output_mode="multilabel").predict
    differing = 0
    for seed in (2, 3):
        p = torch.rand(1, 1, 100_000, generator=torch.Generator().manual_seed(seed)) ** 3
        ours, theirs = rma_predict(p, "dice", "multilabel"), anchor(p)
        differing += int(not torch.equal(ours, theirs))
        assert rma_objective(p[0, 0], ours[0, 0]) >= rma_objective(p[0, 0], theirs[0, 0])
        assert torch.equal(rma_predict(p.double(), "dice", "multilabel"), anchor(p.double()))
    assert differing >= 1  # the float32 case is exercised, not only ties


def test_edge_cases():
    """Edge cases: all-zero and uniform maps, d = 1, one class in multiclass mode, empty input."""
    zeros = torch.zeros(2, 3, 4, 4, dtype=torch.float64)
    for metric in ("dice", "iou"):
        assert not rma_predict(zeros, metric, "multilabel", pruning_prob=0.0).any()
        labels = rma_predict(torch.full((2, 3, 4, 4), 1 / 3), metric, "multiclass")
        assert labels.shape == (2, 4, 4) and labels.min() >= 0 and labels.max() < 3  # every pixel
        assert rma_predict(torch.ones(1, 2, 5, 5), metric, "multilabel").all()
        one = rma_predict(torch.tensor([[[0.7]]]), metric, "multilabel")  # d = 1
        assert one.shape == (1, 1, 1) and one.item()
        assert not rma_predict(torch.tensor([[[0.2]]]), metric, "multilabel").item()  # pruned
        single = rma_predict(torch.tensor([[[[0.2]], [[0.8]]]]), metric, "multiclass")
        assert single.shape == (1, 1, 1) and single.item() == 1
    assert_param_error(rma_predict, torch.rand(1, 1, 4, 4), output_mode="multiclass", param="probs")
    assert_param_error(rma_predict, torch.rand(1, 3, 0, 4), output_mode="multilabel", param="probs")
    assert rma_predict(torch.rand(0, 3, 4, 4), output_mode="multilabel").shape == (0, 3, 4, 4)
    assert rma_predict(torch.full((0, 2, 4), 0.5), output_mode="multiclass").shape == (0, 4)


def test_pruning_empties_faint_classes(random_probs):
    probs = 0.4 * random_probs(2, 2, 30, seed=1)
    assert not rma_predict(probs, output_mode="multilabel").any()
    assert rma_predict(probs, output_mode="multilabel", pruning_prob=0.1).any()


def test_invariance_shapes_and_numpy(random_probs):
    """Permuting pixels permutes the mask; shapes, dtypes; numpy in -> numpy out."""
    probs = random_probs(2, 3, 64, seed=2, softmax=True)
    perm = torch.randperm(64, generator=torch.Generator().manual_seed(0))
    for mode in ("multilabel", "multiclass"):
        out = rma_predict(probs, "dice", mode, pruning_prob=0.2)
        out_perm = rma_predict(probs[..., perm], "dice", mode, pruning_prob=0.2)
        assert torch.equal(out[..., perm], out_perm)
    spatial = random_probs(2, 3, 5, 6, 7, seed=3, softmax=True)
    assert rma_predict(spatial, output_mode="multilabel").shape == (2, 3, 5, 6, 7)
    assert rma_predict(spatial, output_mode="multilabel").dtype == torch.bool
    labels = rma_predict(spatial, output_mode="multiclass")
    assert labels.shape == (2, 5, 6, 7) and labels.dtype == torch.int64
    as_numpy = rma_predict(spatial.numpy(), output_mode="multiclass")
    assert isinstance(as_numpy, np.ndarray) and as_numpy.dtype == np.int64
    assert np.array_equal(as_numpy, labels.numpy())
    for low in (torch.float32, torch.bfloat16):  # rounded inputs: same masks as their float64
        rounded = spatial.to(low)
        assert torch.equal(
            rma_predict(rounded, output_mode="multilabel", solver="linear"),
            rma_predict(rounded.double(), output_mode="multilabel"),
        )
        assert rma_predict(rounded, metric="iou").shape == (2, 5, 6, 7)


def test_estimator_mirrors_the_function(random_probs):
    probs = random_probs(2, 3, 8, 8, seed=4, softmax=True)
    model = RankSEGRMA(
        metric="iou",
        output_mode="multiclass",
        pruning_prob=0.1,
        unassigned_policy="void",
        void_index=-1,
    )
    assert torch.equal(
        model.predict(probs),
        rma_predict(
            probs, "iou", "multiclass", pruning_prob=0.1, unassigned_policy="void", void_index=-1
        ),
    )
    assert "RankSEGRMA(metric='iou'" in repr(model)
    assert_param_error(RankSEGRMA, safe_screening=True, param="solver_params", exc=TypeError)
    assert_param_error(RankSEGRMA, metric="Dice", param="metric")


def test_bad_inputs(random_probs):
    """Worded ValueError / TypeError for every bad argument."""
    good = random_probs(1, 3, 4, 4, softmax=True)
    bad_range = good.clone()
    bad_range[0, 0, 0, 0] = 1.5
    nan = good.clone()
    nan[0, 1, 2, 2] = float("nan")
    assert_param_error(rma_predict, bad_range, param="probs")
    assert_param_error(rma_predict, -good, param="probs")
    assert_param_error(rma_predict, nan, param="probs")
    assert_param_error(
        rma_predict, torch.ones(1, 3, 4, 4, dtype=torch.int64), param="probs", exc=TypeError
    )
    assert_param_error(
        rma_predict, np.ones((1, 3, 4, 4), dtype=np.int32), param="probs", exc=TypeError
    )
    assert_param_error(rma_predict, [[0.5]], param="probs", exc=TypeError)
    assert_param_error(rma_predict, good[0, 0], param="probs")
    assert_param_error(rma_predict, good, metric="acc", param="metric")
    assert_param_error(rma_predict, good, output_mode="overlap", param="output_mode")
    assert_param_error(rma_predict, good, solver="BA", param="solver")
    assert_param_error(rma_predict, good, smooth=-0.1, param="smooth")
    assert_param_error(rma_predict, good, smooth=float("inf"), param="smooth")
    assert_param_error(rma_predict, good, pruning_prob=1.5, param="pruning_prob")
    assert_param_error(rma_predict, good, pruning_prob=-0.1, param="pruning_prob")
    assert_param_error(rma_predict, good, smooth=1.0, solver="linear", param="smooth")
    assert_param_error(rma_predict, good, unassigned_policy="drop", param="unassigned_policy")
    assert_param_error(
        rma_predict, good, unassigned_policy="void", void_index=1, param="void_index"
    )
    # non-normalised multiclass probabilities; fine for multilabel
    assert_param_error(rma_predict, 0.5 * good, output_mode="multiclass", param="probs")
    assert rma_predict(0.5 * good, output_mode="multilabel").shape == good.shape


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("solver", ["sort", "linear"])
def test_cuda_agrees_with_cpu(solver, random_probs):
    probs = random_probs(4, 5, 128, 128, seed=9, softmax=True)
    for metric in ("dice", "iou"):
        for mode in ("multilabel", "multiclass"):
            cpu = rma_predict(probs, metric, mode, solver=solver, pruning_prob=0.1)
            gpu = rma_predict(probs.cuda(), metric, mode, solver=solver, pruning_prob=0.1)
            assert gpu.device.type == "cuda" and torch.equal(gpu.cpu(), cpu)
    big = random_probs(2, 1, 10**6, seed=10, dtype=torch.float32)
    assert torch.equal(
        rma_predict(big.cuda(), output_mode="multilabel", solver=solver).cpu(),
        rma_predict(big, output_mode="multilabel", solver=solver),
    )
