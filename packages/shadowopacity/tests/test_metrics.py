import math

import pytest
import torch

from shadowopacity.metrics import (
    ber,
    binned_mae,
    instance_opacity_kendall,
    opacity_mae,
    opacity_rmse,
    removal_psnr,
)


def test_ber_hand_example():
    # TP = 8 of Np = 10, TN = 80 of Nn = 90: BER = 100 (1 - (0.8 + 0.8889) / 2) = 15.56
    gt = torch.zeros(1, 1, 1, 100, dtype=torch.bool)
    gt[..., :10] = True
    pred = torch.zeros_like(gt)
    pred[..., :8] = True
    pred[..., 10:20] = True
    assert ber(pred, gt) == pytest.approx(100 * (1 - 0.5 * (0.8 + 80 / 90)))
    assert round(ber(pred, gt), 2) == 15.56


def test_mae_rmse_values():
    gt = torch.zeros(1, 1, 2, 2)
    pred = torch.tensor([0.0, 0.2, 0.0, 0.4]).view(1, 1, 2, 2)
    assert opacity_mae(pred, gt) == pytest.approx(0.15)
    assert opacity_rmse(pred, gt) == pytest.approx(math.sqrt((0.04 + 0.16) / 4))


def test_binned_mae():
    gt = torch.tensor([0.0, 0.2, 0.5, 0.9]).view(1, 1, 1, 4)
    pred = torch.tensor([0.5, 0.3, 0.3, 0.9]).view(1, 1, 1, 4)
    bins = binned_mae(pred, gt)
    assert list(bins) == ["(0.05, 0.35]", "(0.35, 0.65]", "(0.65, 1]"]
    assert bins["(0.05, 0.35]"] == pytest.approx(0.1)
    assert bins["(0.35, 0.65]"] == pytest.approx(0.2)
    assert bins["(0.65, 1]"] == pytest.approx(0.0)


def test_kendall():
    ids = torch.zeros(2, 4, 4, dtype=torch.long)
    ids[0, :2], ids[0, 2:], ids[1, :2] = 1, 2, 1
    gt = torch.zeros(2, 1, 4, 4)
    gt[0, 0, :2], gt[0, 0, 2:], gt[1, 0, :2] = 0.3, 0.9, 0.6
    assert instance_opacity_kendall(gt * 0.5, gt, ids) == pytest.approx(1.0)
    assert instance_opacity_kendall(1 - gt, gt, ids) == pytest.approx(-1.0)


def test_psnr():
    gt = torch.zeros(1, 3, 4, 4)
    assert removal_psnr(gt + 0.1, gt) == pytest.approx(20.0)
