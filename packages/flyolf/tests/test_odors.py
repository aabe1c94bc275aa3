"""Odor prototypes and noise environments."""

import numpy as np
import pytest
import torch

from flyolf import add_noise, make_odor_task, odor_prototypes


def test_prototypes_overlap_by_about_0_3():
    corr = []
    for seed in range(20):
        p = odor_prototypes(10, 50, seed=seed).numpy()
        c = np.corrcoef(p)
        corr.append(c[np.triu_indices(10, 1)].mean())
    assert np.mean(corr) == pytest.approx(0.3, abs=0.05)


def test_gaussian_noise_has_the_stated_scale_before_clipping():
    r = torch.full((2000, 50), 100.0)
    noisy = add_noise(r, 0.5, "gaussian", seed=1)
    assert float((noisy - r).std()) == pytest.approx(25.0, rel=0.02)  # sigma * 50 Hz
    assert float(noisy.min()) >= 0 and float(noisy.max()) <= 200


def test_background_noise_adds_a_distractor():
    r = odor_prototypes(4, 50)
    noisy = add_noise(r, 2.0, "background", seed=0)
    assert (noisy >= r - 1e-4).all() and float((noisy - r).sum()) > 0


def test_task_shapes_and_fresh_test_noise():
    task = make_odor_task(n_classes=4, n_train=3, n_test=5, noise=1.0, seed=2)
    assert task.X_train.shape == (12, 50) and task.X_test.shape == (20, 50)
    assert task.y_train.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert not torch.equal(task.X_train[:3], task.X_test[:3])
    again = make_odor_task(n_classes=4, n_train=3, n_test=5, noise=1.0, seed=2)
    assert torch.equal(task.X_test, again.X_test)
