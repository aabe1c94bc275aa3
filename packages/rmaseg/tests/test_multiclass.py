import torch

from paperkit.testing import assert_close
from rmaseg import rma_predict
from rmaseg.multiclass import increment_scores, resolve_overlaps
from rmaseg.rma import rma_value


def _masks(probs, metric, prune):
    return rma_predict(probs, metric, "multilabel", pruning_prob=prune).flatten(2)


def test_unique_pixels_keep_their_class_and_void_marks_unselected(random_probs):
    """A pixel selected by exactly one class gets it; 'void' writes void_index exactly
    on unselected pixels."""
    probs = random_probs(4, 5, 20, 20, seed=3, softmax=True)
    for metric in ("dice", "iou"):
        masks = _masks(probs, metric, 0.3)
        count = masks.sum(1)
        assert (count == 0).any() and (count > 1).any() and (count == 1).any()  # all three kinds
        labels = rma_predict(probs, metric, "multiclass", pruning_prob=0.3).flatten(1)
        unique = count == 1
        assert torch.equal(labels[unique], masks.float().argmax(1)[unique])
        claimed = masks.gather(1, labels.unsqueeze(1)).squeeze(1)
        assert claimed[count > 1].all()  # an overlapped pixel goes to a class that selected it
        void = rma_predict(
            probs, metric, "multiclass", pruning_prob=0.3, unassigned_policy="void", void_index=99
        ).flatten(1)
        assert torch.equal(void == 99, count == 0)
        assert torch.equal(void[count > 0], labels[count > 0])


def _objective(p, U, metric, smooth):
    return rma_value(p[U].sum(), U.sum().double(), p.sum(), metric, smooth)


def test_increments_equal_objective_after_minus_before(random_probs):
    """The closed-form increments are the RMA objective after adding pixel j to U_c
    minus before, numerically (s = 0 and s > 0)."""
    probs = random_probs(1, 3, 40, seed=5, softmax=True)
    masks = _masks(probs.view(1, 3, 40, 1), "dice", 0.0)
    for metric in ("dice", "iou"):
        for smooth in (0.0, 0.7):
            delta = increment_scores(probs, masks, metric, smooth)
            unique = masks & (masks.sum(1, keepdim=True) == 1)
            for c in range(3):
                p, U = probs[0, c], unique[0, c]
                before = _objective(p, U, metric, smooth)
                for j in range(40):
                    after = p[U].sum() + p[j], U.sum().double() + 1
                    ref = rma_value(after[0], after[1], p.sum(), metric, smooth) - before
                    assert_close(delta[0, c, j], ref, rtol=1e-9, atol=1e-14)


def test_unassigned_pixels_use_active_classes_or_all_when_every_class_is_pruned():
    probs = torch.tensor([[[0.45, 0.3], [0.35, 0.3], [0.2, 0.4]]], dtype=torch.float64)
    none = torch.zeros(1, 3, 2, dtype=torch.bool)
    delta = increment_scores(probs, none, "dice")
    all_pruned = resolve_overlaps(probs, none, torch.zeros(1, 3, dtype=torch.bool), "dice")
    assert torch.equal(all_pruned, delta.argmax(1))
    only_two = resolve_overlaps(probs, none, torch.tensor([[False, False, True]]), "dice")
    assert torch.equal(only_two, torch.full((1, 2), 2))
