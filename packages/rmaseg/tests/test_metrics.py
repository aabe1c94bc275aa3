import torch

from paperkit.testing import assert_close, assert_param_error
from rmaseg.metrics import dice, iou, mdice_dataset, mdice_image, miou_dataset, miou_image


def test_dice_iou_by_hand():
    pred = torch.tensor([[[1, 1, 0, 0]], [[0, 0, 0, 0]]], dtype=torch.bool)
    true = torch.tensor([[[1, 0, 1, 0]], [[0, 0, 0, 0]]], dtype=torch.bool)
    # |I ∩ Y| = 1, |I| = |Y| = 2: Dice 2/4, IoU 1/3; the empty pair takes `empty`
    assert_close(
        dice(pred, true), torch.tensor([[0.5], [1.0]], dtype=torch.float64), rtol=0, atol=1e-15
    )
    assert_close(
        iou(pred, true, empty=0.0),
        torch.tensor([[1 / 3], [0.0]], dtype=torch.float64),
        rtol=0,
        atol=1e-15,
    )
    assert_close(
        dice(pred, true, smooth=1.0),
        torch.tensor([[0.6], [1.0]], dtype=torch.float64),
        rtol=0,
        atol=1e-15,
    )
    assert_param_error(dice, pred, true[:1], param="target")
    assert_param_error(dice, pred.long(), true, param="pred", exc=TypeError)


def test_image_and_dataset_means():
    pred = torch.tensor([[0, 0, 1, 1], [2, 2, 2, 0]])
    true = torch.tensor([[0, 1, 1, 1], [2, 2, 0, 0]])
    # image 0: class 0 IoU 1/2, class 1 2/3 (class 2 absent); image 1: class 0 1/2, class 2 2/3
    assert abs(miou_image(pred, true, 3) - (1 / 2 + 2 / 3) / 2) < 1e-12
    assert abs(mdice_image(pred, true, 3) - (2 / 3 + 4 / 5) / 2) < 1e-12
    # dataset: class 0 inter 2 union 4; class 1 2/3; class 2 2/3
    assert abs(miou_dataset(pred, true, 3) - (2 / 4 + 2 / 3 + 2 / 3) / 3) < 1e-12
    assert abs(mdice_dataset(pred, true, 3) - (4 / 6 + 4 / 5 + 4 / 5) / 3) < 1e-12
    void = torch.tensor([[255, 0, 1, 1]])
    assert abs(miou_image(void, true[:1], 3) - (0 + 2 / 3) / 2) < 1e-12  # void: no class
    assert_param_error(miou_image, pred, true, 0, param="num_classes")
