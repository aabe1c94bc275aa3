"""Generators: valid images, the PCA-Gaussian mean, seeds, the checkerboard, and the split."""

import numpy as np
import pytest
import torch

from idenergy.data import load_digits_images
from idenergy.generators import (
    MixupGenerator,
    PCAGaussianGenerator,
    PixelGMMGenerator,
    TinyVAEGenerator,
    UpsampleArtifactGenerator,
    image_hashes,
)


@pytest.fixture(scope="module")
def split():
    X = load_digits_images(8)
    order = np.random.default_rng(0).permutation(len(X))
    return X[order[:300]], X[order[300:500]]


@pytest.mark.parametrize(
    "make",
    [
        lambda: PCAGaussianGenerator(k=8),
        lambda: PixelGMMGenerator(n_components=3, max_iter=20),
        lambda: TinyVAEGenerator(latent=4, steps=20),
        lambda: UpsampleArtifactGenerator(),
        lambda: MixupGenerator(),
    ],
    ids=["pca", "gmm", "vae", "upsample", "mixup"],
)
def test_samples_are_images_seeded_and_fitted_on_train_only(split, make):
    train, test = split
    gen = make().fit(train)
    a = gen.sample(50, seed=3)
    assert a.shape == (50, 1, 8, 8) and a.dtype == np.float32
    assert np.isfinite(a).all() and a.min() >= 0 and a.max() <= 1
    assert np.array_equal(a, gen.sample(50, seed=3)) and not np.array_equal(
        a, gen.sample(50, seed=4)
    )
    assert gen.fitted_hashes_ == image_hashes(train)
    assert not gen.fitted_hashes_ & image_hashes(test)  # no test image was seen


def test_pca_gaussian_sample_mean_tends_to_data_mean(split):
    train, _ = split
    gen = PCAGaussianGenerator(k=16).fit(train)
    # the Gaussian before the clip to [0, 1] (which lifts the mean of the many black pixels):
    # pixel std <= 0.4, so 5 SE of a 5,000-sample mean is 0.028
    raw = gen._sample(5000, seed=0).reshape(5000, *train.shape[1:])
    assert np.abs(raw.mean(0) - train.mean(0)).max() < 0.03
    assert np.array_equal(np.clip(raw, 0, 1).astype(np.float32), gen.sample(5000, seed=0))


def test_transposed_upsampling_leaves_a_checkerboard():
    flat = np.full((4, 1, 8, 8), 0.5, dtype=np.float32)
    out = UpsampleArtifactGenerator(strength=0.2).fit(flat).sample(1, seed=0)[0, 0]
    inner = out[2:6, 2:6]
    # closed form: per axis the tap that copies a pixel weighs 1 - s, the ones between two 1 + s
    expected = 0.5 * np.outer([0.8, 1.2, 0.8, 1.2], [0.8, 1.2, 0.8, 1.2])
    assert np.allclose(inner, expected, atol=1e-6)
    plain = UpsampleArtifactGenerator(strength=0.0).fit(flat).sample(1, seed=0)[0, 0]
    assert np.allclose(plain[2:6, 2:6], 0.5, atol=1e-6)
    assert torch.isclose(UpsampleArtifactGenerator(factor=3).kernel().sum(), torch.tensor(3.0))


def test_mixup_is_a_convex_combination():
    X = np.stack([np.zeros((1, 8, 8)), np.ones((1, 8, 8))]).astype(np.float32)
    s = MixupGenerator(0.3, 0.7).fit(X).sample(200, seed=1)
    assert (s.std(axis=(1, 2, 3)) < 1e-6).all()  # each sample is flat: lam * a + (1 - lam) * b
    assert set(np.unique(np.round(s[:, 0, 0, 0], 6))) - {0.0, 1.0}  # mixtures of the two images
