"""Detector interface: orientation (larger = generated), natural-only calibration at 95 % TNR,
one backbone call per batch, and the supervised baseline."""

import numpy as np
import pytest
import torch

from conftest import Counting
from idenergy.data import make_dead_leaves
from idenergy.detectors import (
    DEnDDetector,
    EnergyDetector,
    KNNDetector,
    MSPDetector,
    PCAReconDetector,
    RigidDetector,
    SupervisedDetector,
)
from idenergy.metrics import auroc


class Brightness:
    """A backbone that reads the label off the mean pixel m: logits (10 (1 - m), 0) (dark images
    are confident, low-energy patterns), features (m, 1 - m)."""

    def logits(self, x):
        m = x.mean(dim=(1, 2, 3))
        return torch.stack([10 * (1 - m), torch.zeros_like(m)], dim=1)

    def features(self, x):
        m = x.mean(dim=(1, 2, 3))
        return torch.stack([m, 1 - m], dim=1)


def _dark_and_bright(n=30):
    g = torch.Generator().manual_seed(0)
    dark = 0.1 + 0.05 * torch.rand(n, 1, 8, 8, generator=g)  # "natural"
    bright = 0.8 + 0.05 * torch.rand(n, 1, 8, 8, generator=g)  # "generated"
    return dark, bright


def test_score_equal_to_the_label_gives_auroc_one():
    dark, bright = _dark_and_bright()
    y = np.r_[np.zeros(30), np.ones(30)]
    for det in (EnergyDetector(Brightness()), MSPDetector(Brightness())):
        det.fit(dark)
        scores = np.r_[det.score_samples(dark), det.score_samples(bright)]
        assert auroc(scores, y) == 1.0
        assert det.predict(bright).tolist() == [1] * 30
    knn = KNNDetector(Brightness(), k=3).fit(dark)
    assert auroc(np.r_[knn.score_samples(dark), knn.score_samples(bright)], y) == 1.0
    pca = PCAReconDetector(k=2).fit(
        torch.rand(40, 1, 8, 8, generator=torch.Generator().manual_seed(1)) * 0.1
    )
    assert (
        auroc(
            np.r_[pca.score_samples(dark * 0 + 0.05), pca.score_samples(torch.rand(30, 1, 8, 8))], y
        )
        == 1.0
    )


def test_dend_threshold_keeps_95_percent_tnr_on_held_out_natural(backbone):
    X = make_dead_leaves(2500, size=8, seed=3)
    det = DEnDDetector(backbone, n=1).fit(X[:1000])
    tnr = float(np.mean(det.predict(X[1000:]) == 0))
    assert abs(tnr - 0.95) <= 0.02  # 1500 held-out images: SE of the TNR about 0.006
    assert det.threshold_ == pytest.approx(
        np.quantile(det.score_samples(X[:1000]), 0.95, method="higher")
    )


def test_fit_refuses_labels_so_generated_images_are_never_seen(backbone):
    X = torch.rand(20, 1, 16, 16)
    with pytest.raises(TypeError, match="'y'"):
        DEnDDetector(backbone).fit(X, np.r_[np.zeros(10), np.ones(10)])


def test_scores_are_reproducible_and_batched_once(backbone):
    X = torch.rand(30, 1, 16, 16, generator=torch.Generator().manual_seed(2))
    a = DEnDDetector(backbone, n=3, batch_size=8, seed=5).score_samples(X)
    b = DEnDDetector(backbone, n=3, batch_size=8, seed=5).score_samples(X)
    assert np.array_equal(a, b)
    counting = Counting(backbone)
    RigidDetector(counting, n=2, batch_size=16).score_samples(X)
    assert counting.calls == 2 and counting.rows == [48, 42]


def test_rigid_is_zero_without_noise(backbone):
    X = torch.rand(6, 1, 16, 16)
    assert float(np.abs(RigidDetector(backbone, sigma=0.0).score_samples(X)).max()) < 1e-5


def test_knn_leave_one_out_calibration():
    dark, _ = _dark_and_bright(20)
    det = KNNDetector(Brightness(), k=1).fit(dark)
    # the nearest neighbour of a bank image, itself skipped, is another image: distance > 0
    assert det.threshold_ > 0


def test_supervised_learns_a_separable_task_and_unfitted_predict_is_refused():
    dark, bright = _dark_and_bright(40)
    X = torch.cat([dark, bright])
    y = np.r_[np.zeros(40), np.ones(40)]
    det = SupervisedDetector(steps=15, seed=0).fit(X, y)
    assert auroc(det.score_samples(X), y) == 1.0 and det.threshold_ == 0.0
    with pytest.raises(TypeError, match="'self'"):
        SupervisedDetector().predict(X)
