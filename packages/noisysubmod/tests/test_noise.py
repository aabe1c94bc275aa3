import numpy as np
import pytest

from noisysubmod import NoisyOracle, noise_moments
from noisysubmod.functions import WeightedCoverage

F = WeightedCoverage.random(n=40, universe=100, density=0.1, seed=0)


def test_persistence_order_free_and_repeatable():
    noisy = NoisyOracle(F, noise="gaussian", sigma=1.0, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        S = rng.choice(40, size=6, replace=False)
        values = {
            noisy(S),
            noisy(S[::-1]),
            noisy(frozenset(S.tolist())),
            noisy(np.isin(np.arange(40), S)),
        }
        assert len(values) == 1
    assert noisy.n_queries == 80


def test_noise_independent_across_neighbouring_sets():
    """corr(xi_S, xi_{S + e}) over 10^4 random pairs: |rho| < 0.04 (4 SE of 1/sqrt(10^4))."""
    noisy = NoisyOracle(F, noise="exponential", sigma=1.0, seed=1)
    rng = np.random.default_rng(1)
    S = rng.random((10_000, 40)) < 0.3
    e = rng.integers(0, 40, size=10_000)
    S[np.arange(10_000), e] = False
    T = S.copy()
    T[np.arange(10_000), e] = True
    rho = np.corrcoef(noisy.xi(S), noisy.xi(T))[0, 1]
    assert abs(rho) < 0.04


@pytest.mark.parametrize(
    "noise,sigma", [("gaussian", 0.5), ("gaussian", 1.0), ("exponential", 1.0), ("uniform", 0.5)]
)
def test_noise_law_moments(noise, sigma):
    """Mean and variance of xi over 10^5 distinct sets within 4 SE of the exact moments
    (closed forms in noise_moments; the clipped gaussian is not renormalised)."""
    n = 60
    f = WeightedCoverage.random(n=n, universe=10, density=0.5, seed=0)
    noisy = NoisyOracle(f, noise=noise, sigma=sigma, seed=7)
    masks = np.random.default_rng(2).random((100_000, n)) < 0.5  # distinct w.p. ~1
    xi = noisy.xi(masks)
    mean, var = noise_moments(noise, sigma)
    assert abs(xi.mean() - mean) < 4 * np.sqrt(var / xi.size)
    fourth = np.mean((xi - xi.mean()) ** 4)
    assert abs(xi.var() - var) < 4 * np.sqrt((fourth - var**2) / xi.size)


def test_gaussian_mean_closed_form():
    # E max(0, 1 + Z) = Phi(1) + phi(1) = 0.841345 + 0.241971 (normal tables)
    assert noise_moments("gaussian", 1.0)[0] == pytest.approx(1.083316, abs=1e-6)


def test_zero_sigma_is_exact_and_seeds_matter():
    exact = NoisyOracle(F, noise="gaussian", sigma=0.0, seed=0)
    S = np.arange(5)
    assert exact(S) == pytest.approx(F(S))
    a, b = NoisyOracle(F, seed=1), NoisyOracle(F, seed=1)
    c = NoisyOracle(F, seed=2)
    assert a(S) == b(S) != c(S)


def test_extensions_match_set_queries():
    noisy = NoisyOracle(F, noise="uniform", sigma=0.8, seed=4)
    masks = np.random.default_rng(3).random((5, 40)) < 0.2
    cand = np.array([0, 7, 39])
    base, ext = noisy.extensions(masks, cand)
    grown = np.repeat(masks, 3, axis=0)
    grown[np.arange(15), np.tile(cand, 5)] = True
    np.testing.assert_allclose(ext.ravel(), noisy.evaluate(grown), rtol=1e-6)
    np.testing.assert_allclose(base, noisy.evaluate(masks), rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"sigma": -1.0}, "'sigma'"),
        ({"noise": "cauchy"}, "'noise'"),
        ({"noise": "exponential", "sigma": 2.0}, "'sigma'"),
        ({"noise": "uniform", "sigma": 1.5}, "'sigma'"),
    ],
)
def test_bad_noise_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NoisyOracle(F, **kwargs)


def test_negative_value_and_non_callable():
    class Negative:
        n = 3

        def __call__(self, S):
            return -1.0

    with pytest.raises(ValueError, match="'f'"):
        NoisyOracle(Negative())([0])
    with pytest.raises(TypeError, match="'f'"):
        NoisyOracle(3.0)
