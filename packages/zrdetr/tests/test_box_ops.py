"""Box operations used by the matching cost and the loss (paper Sec. 3)."""

import pytest
import torch

from paperkit.testing import assert_close
from zrdetr.box_ops import box_cxcywh_to_xyxy, box_iou, box_xyxy_to_cxcywh, generalized_box_iou


def _random_xyxy(n, seed):
    g = torch.Generator().manual_seed(seed)
    lo = torch.rand(n, 2, generator=g)
    return torch.cat([lo, lo + 0.05 + torch.rand(n, 2, generator=g)], 1)


def test_giou_of_a_box_with_itself_is_one_and_far_boxes_near_minus_one():
    b = _random_xyxy(6, 0)
    assert_close(torch.diagonal(generalized_box_iou(b, b)), torch.ones(6), rtol=1e-6, atol=1e-6)
    a = torch.tensor([[0.0, 0.0, 1.0, 1.0]])
    far = torch.tensor([[100.0, 100.0, 101.0, 101.0]])
    assert generalized_box_iou(a, far).item() < -0.9


def test_iou_closed_form_and_round_trip():
    a = torch.tensor([[0.0, 0.0, 2.0, 2.0]], dtype=torch.float64)
    b = torch.tensor([[1.0, 1.0, 3.0, 3.0], [5.0, 5.0, 6.0, 6.0]], dtype=torch.float64)
    assert_close(
        box_iou(a, b), torch.tensor([[1 / 7, 0.0]], dtype=torch.float64), rtol=1e-12, atol=1e-15
    )
    # GIoU of the first pair: enclosing box 3x3 = 9, union 7 -> 1/7 - 2/9
    assert_close(generalized_box_iou(a, b)[0, 0], 1 / 7 - 2 / 9, rtol=1e-12, atol=1e-15)
    c = torch.rand(5, 4, dtype=torch.float64)
    assert_close(box_xyxy_to_cxcywh(box_cxcywh_to_xyxy(c)), c, rtol=1e-12, atol=1e-15)


def test_box_iou_matches_torchvision():
    ops = pytest.importorskip("torchvision.ops")
    a, b = _random_xyxy(7, 1), _random_xyxy(5, 2)
    assert_close(box_iou(a, b), ops.box_iou(a, b), rtol=1e-6, atol=1e-7)
    assert_close(generalized_box_iou(a, b), ops.generalized_box_iou(a, b), rtol=1e-6, atol=1e-7)
