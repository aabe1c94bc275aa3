import torch

from paperkit.testing import assert_param_error
from rmaseg.data import calibrated_binary, calibrated_multiclass, sample_labels


def test_regimes_and_seeds():
    faint = calibrated_binary(20, size=16, seed=0)
    confident = calibrated_binary(20, size=16, seed=0, objects="confident")
    assert faint.shape == (20, 1, 16, 16) and faint.dtype == torch.float64
    assert (faint < 0.5).float().mean() > 0.98  # faint: most p < 0.5
    assert ((confident < 0.1) | (confident > 0.9)).float().mean() > 0.6
    assert torch.equal(faint, calibrated_binary(20, size=16, seed=0))
    assert not torch.equal(faint, calibrated_binary(20, size=16, seed=1))
    multi = calibrated_multiclass(3, C=4, size=8, seed=0)
    assert multi.shape == (3, 4, 8, 8)
    assert torch.allclose(multi.sum(1), torch.ones(3, 8, 8, dtype=torch.float64), atol=1e-12)


def test_labels_are_calibrated():
    probs = calibrated_multiclass(2, C=3, size=8, seed=1)
    y = sample_labels(probs, 4000, seed=0, output_mode="multiclass")
    assert y.shape == (4000, 2, 8, 8) and y.dtype == torch.int64
    freq = torch.stack([(y == c).double().mean(0) for c in range(3)], dim=1)
    assert (freq - probs).abs().max() < 0.04  # 4000 draws: sd <= 0.008 per pixel
    b = sample_labels(probs[:, :1], 4000, seed=0)
    assert b.dtype == torch.bool and (b.double().mean(0) - probs[:, :1]).abs().max() < 0.04
    assert torch.equal(
        sample_labels(probs, 3, seed=5, output_mode="multiclass"),
        sample_labels(probs, 3, seed=5, output_mode="multiclass"),
    )


def test_bad_arguments():
    assert_param_error(calibrated_binary, 0, param="n")
    assert_param_error(calibrated_binary, 2, objects="huge", param="objects")
    assert_param_error(calibrated_multiclass, 2, C=1, param="C")
    assert_param_error(sample_labels, torch.rand(1, 2, 3), 0, param="n_draws")
