import numpy as np
import pytest


class MixturePosterior:
    """A fixed probabilistic classifier: the Bayes posterior of a Gaussian mixture with identity
    covariance, softmax(-|x - mu_y|^2 / 2). ``levels`` > 0 rounds every probability onto that many
    values, so conformity scores tie heavily."""

    def __init__(self, means, levels=0):
        self.means = np.asarray(means, dtype=float)
        self.classes_ = np.arange(len(self.means))
        self.levels = levels

    def predict_proba(self, X):
        logits = -0.5 * ((np.asarray(X)[:, None, :] - self.means[None]) ** 2).sum(-1)
        logits -= logits.max(axis=1, keepdims=True)
        proba = np.exp(logits)
        proba /= proba.sum(axis=1, keepdims=True)
        if self.levels:
            proba = np.floor(proba * self.levels).clip(max=self.levels - 1) / self.levels
        return proba


@pytest.fixture
def mixture():
    """(means (K, d), fixed posterior classifier factory, sampler of views)."""

    def make(n_classes=5, dim=4, spread=1.0, seed=0, levels=0):
        means = spread * np.random.default_rng(seed).standard_normal((n_classes, dim))

        def views(y, m, rng):
            return means[y][:, None, :] + rng.standard_normal((len(y), m, dim))

        return means, MixturePosterior(means, levels), views

    return make
