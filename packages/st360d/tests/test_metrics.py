"""Depth metrics with median and affine-disparity alignment."""

import torch

from st360d import depth_metrics


def test_median_alignment_removes_a_global_scale():
    gt = torch.rand(16, 32, generator=torch.Generator().manual_seed(0)) + 0.5
    m = depth_metrics(gt * 3, gt)
    assert m["abs_rel"] < 1e-6 and m["delta1"] == 1.0 and m["rmse"] < 1e-6  # float32 input


def test_affine_disparity_alignment_removes_scale_and_shift():
    gt = torch.rand(16, 32, generator=torch.Generator().manual_seed(1), dtype=torch.float64) + 1
    pred = 1.0 / (2.0 / gt + 0.3)
    assert depth_metrics(pred, gt, align="affine_disparity")["abs_rel"] < 1e-10
    assert depth_metrics(pred, gt, align="median")["abs_rel"] > 1e-3


def test_values_on_a_known_case():
    gt = torch.ones(2, 4)
    pred = torch.tensor([[1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0]])
    m = depth_metrics(pred, gt, align="none")
    assert abs(m["abs_rel"] - 0.5) < 1e-12 and m["delta1"] == 0.5
    assert abs(m["rmse"] - 0.5**0.5) < 1e-7
    mask = torch.zeros(2, 4, dtype=torch.bool)
    mask[0] = True
    assert depth_metrics(pred, gt, mask, align="none")["abs_rel"] == 0.0


def test_numpy_inputs_give_the_same_numbers():
    gt = torch.rand(8, 16, generator=torch.Generator().manual_seed(2), dtype=torch.float64) + 1
    pred = gt * (1 + 0.1 * torch.rand(8, 16, generator=torch.Generator().manual_seed(3)))
    assert depth_metrics(pred.numpy(), gt.numpy()) == depth_metrics(pred, gt)
