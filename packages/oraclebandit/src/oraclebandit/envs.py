"""Stochastic semi-bandit environments and the simulation loop :func:`run`.

Each round a vector :math:`X_t \\in \\mathbb{R}^d` is drawn i.i.d.; the agent plays :math:`A_t`,
observes :math:`X_{t,i}` for :math:`i \\in A_t` and the regret is

.. math:: R_T = T \\max_A r(A, \\mu) - \\sum_{t \\le T} r(A_t, \\mu), \\quad \\mu = E[X_t].

Draws are made in blocks of 4096 rounds from the environment's own generator, so a run is a
deterministic function of ``seed`` (and the algorithm's ``random_state``).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy.special import ndtr

from oraclebandit.base import SemiBanditAlgorithm
from paperkit import check_array, check_int, describe, param_error

__all__ = ["BernoulliSemiBandit", "CorrelatedGaussianSemiBandit", "run"]

BLOCK = 4096


def _seed(seed: Any, owner: str) -> int | None:
    return None if seed is None else check_int("seed", owner, seed, low=0)


def _phi(z: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def clipped_normal_mean(mu: np.ndarray, sigma: np.ndarray, low: float, high: float) -> np.ndarray:
    """:math:`E[\\mathrm{clip}(Z, a, b)]` for :math:`Z \\sim N(\\mu, \\sigma^2)`:
    :math:`a \\Phi(\\alpha) + \\mu (\\Phi(\\beta) - \\Phi(\\alpha)) + \\sigma (\\phi(\\alpha) -
    \\phi(\\beta)) + b (1 - \\Phi(\\beta))`, :math:`\\alpha = (a - \\mu)/\\sigma`,
    :math:`\\beta = (b - \\mu)/\\sigma`; :math:`\\mathrm{clip}(\\mu, a, b)` where
    :math:`\\sigma = 0`."""
    out = np.clip(mu, low, high).astype(float)
    pos = sigma > 0
    m, s = mu[pos], sigma[pos]
    a, b = (low - m) / s, (high - m) / s
    out[pos] = (
        low * ndtr(a) + m * (ndtr(b) - ndtr(a)) + s * (_phi(a) - _phi(b)) + high * (1 - ndtr(b))
    )
    return out


class CorrelatedGaussianSemiBandit:
    """:math:`X_t = \\mathrm{clip}(Z_t, a, b)`, :math:`Z_t \\sim N(\\mu, \\Sigma)` (``clip=None``:
    no clipping). ``means`` is the exact mean of the clipped law (used for the regret).

    Args:
        mu: (d,) means of the Gaussian; in [0, 1] when ``clip=None``.
        cov: (d, d) symmetric positive semi-definite covariance.
        clip: ``(low, high)`` or None.
        seed: seed of the draws (an int >= 0 or None).

    NaN and inf in ``mu``/``cov`` are refused.
    """

    def __init__(
        self,
        mu: np.ndarray,
        cov: np.ndarray,
        clip: tuple[float, float] | None = (0.0, 1.0),
        seed: int | None = 0,
    ) -> None:
        owner = "CorrelatedGaussianSemiBandit"
        dims: dict = {}
        self.mu = check_array("mu", owner, mu, shape=("d",), dims=dims).astype(float)
        self.cov = check_array("cov", owner, cov, shape=("d", "d"), dims=dims).astype(float)
        self.d = len(self.mu)
        if clip is not None:
            if not isinstance(clip, (tuple, list)):
                raise param_error(
                    "clip", owner, "a pair (low, high) or None", describe(clip), cls=TypeError
                )
            bounds = check_array("clip", owner, np.asarray(clip, dtype=float), shape=(2,))
            if bounds[0] >= bounds[1]:
                raise param_error("clip", owner, "a pair with low < high", tuple(clip))
            clip = (float(bounds[0]), float(bounds[1]))
        elif self.mu.min() < 0 or self.mu.max() > 1:
            raise param_error("mu", owner, "in [0, 1] when clip=None", describe(self.mu))
        self.clip = clip
        if not np.allclose(self.cov, self.cov.T, atol=1e-12):
            raise param_error("cov", owner, "symmetric", describe(self.cov))
        vals, vecs = np.linalg.eigh(self.cov)
        if vals.min() < -1e-10 * max(1.0, float(np.abs(vals).max())):
            raise param_error(
                "cov", owner, "positive semi-definite", f"a smallest eigenvalue {vals.min():.3g}"
            )
        self._root = vecs * np.sqrt(np.maximum(vals, 0.0))
        self.seed = _seed(seed, owner)
        sigma = np.sqrt(np.maximum(np.diag(self.cov), 0.0))
        self.means = self.mu.copy() if clip is None else clipped_normal_mean(self.mu, sigma, *clip)
        self.reset()

    def reset(self) -> None:
        """Restart the draws from ``seed``."""
        self.rng = np.random.default_rng(self.seed)

    def draws(self, n: int) -> np.ndarray:
        """``n`` rounds of draws, (n, d)."""
        n = check_int("n", "CorrelatedGaussianSemiBandit.draws", n, low=1, high=10**7)
        X = self.mu + self.rng.standard_normal((n, self.d)) @ self._root.T
        return X if self.clip is None else np.clip(X, *self.clip)


class BernoulliSemiBandit:
    """Independent Bernoulli arms: :math:`X_{t,i} \\sim \\mathrm{Bernoulli}(\\mu_i)`.
    ``mu`` (d,) in [0, 1] (NaN refused); ``seed`` an int >= 0 or None."""

    def __init__(self, mu: np.ndarray, seed: int | None = 0) -> None:
        owner = "BernoulliSemiBandit"
        self.mu = check_array("mu", owner, mu, shape=("d",)).astype(float)
        if self.mu.min() < 0 or self.mu.max() > 1:
            raise param_error("mu", owner, "in [0, 1]", describe(self.mu))
        self.d = len(self.mu)
        self.means = self.mu.copy()
        self.seed = _seed(seed, owner)
        self.reset()

    def reset(self) -> None:
        """Restart the draws from ``seed``."""
        self.rng = np.random.default_rng(self.seed)

    def draws(self, n: int) -> np.ndarray:
        """``n`` rounds of draws, (n, d) in {0, 1}."""
        n = check_int("n", "BernoulliSemiBandit.draws", n, low=1, high=10**7)
        return (self.rng.random((n, self.d)) < self.mu).astype(float)


def run(env: Any, alg: SemiBanditAlgorithm, T: int) -> dict[str, Any]:
    """Play ``alg`` on ``env`` for ``T`` rounds (both are reset first).

    Returns a dict: ``regret`` (T,) cumulative pseudo-regret :math:`\\sum_{s \\le t}
    (r(A^*, \\mu) - r(A_s, \\mu))`, ``n_queries``, ``n_adaptive_rounds``, ``actions`` (T, d)
    bool, ``wall_time`` (seconds of the round loop), ``optimum`` (the best action).
    ``T`` is at most ``alg.T``. Rewards come from the environment (no NaN).
    """
    owner = "run"
    if not isinstance(alg, SemiBanditAlgorithm):
        raise param_error(
            "alg", owner, "a CUCB, AROQ, SROQ or DoublingCUCB", describe(alg), cls=TypeError
        )
    if not (hasattr(env, "draws") and hasattr(env, "means") and hasattr(env, "reset")):
        raise param_error("env", owner, "a semi-bandit environment", describe(env), cls=TypeError)
    if env.d != alg.d:
        raise param_error("env", owner, f"an environment with d = {alg.d} arms", env.d)
    T = check_int("T", owner, T, low=2, high=alg.T)
    env.reset()
    alg.reset()
    actions = np.zeros((T, alg.d), dtype=bool)
    started = time.perf_counter()
    for start in range(0, T, BLOCK):
        X = env.draws(min(BLOCK, T - start))
        for t in range(len(X)):
            mask = alg.select()
            alg.update(mask, X[t])
            actions[start + t] = mask
    wall = time.perf_counter() - started
    means = np.asarray(env.means, dtype=float)
    best = alg.best_action(means)
    rows, inverse = np.unique(actions, axis=0, return_inverse=True)
    values = np.array([alg.value(r, means) for r in rows])
    per_round = alg.value(best, means) - values[inverse.ravel()]
    return {
        "regret": np.cumsum(per_round),
        "n_queries": alg.n_queries_,
        "n_adaptive_rounds": alg.n_adaptive_rounds_,
        "actions": actions,
        "wall_time": wall,
        "optimum": best,
    }
