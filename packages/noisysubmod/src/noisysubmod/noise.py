r"""The persistent noisy oracle f~(S) = xi_S f(S) (the noise model of arXiv 2510.21128).

The multipliers xi_S are i.i.d. draws from a noise law D, drawn once per set: querying the same
set again returns the same value, so the noise cannot be averaged away by repetition. The draw is
a deterministic function of (S, seed), computed without storing anything:

* every element e gets a random 64-bit Zobrist key k_e, and Z(S) = XOR_{e in S} k_e (order-free);
* u(S) = (splitmix64(Z(S) XOR seed) >> 11 + 1/2) / 2^53, a uniform number in (0, 1);
* xi_S = F_D^{-1}(u(S)).

Laws (``noise=``): ``"gaussian"`` xi = max(0, 1 + sigma Z), Z ~ N(0, 1) (clipped at 0, not
renormalised: E xi = Phi(1/sigma) + sigma phi(1/sigma)); ``"exponential"`` xi ~ Exp(1) (sigma must
be 1); ``"uniform"`` xi ~ U[1 - sigma, 1 + sigma] (sigma <= 1). sigma = 0 gives xi = 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from noisysubmod.sets import as_mask, evaluate, extensions
from paperkit import check_callable, check_choice, check_int, check_real, param_error

__all__ = ["NOISES", "NoisyOracle", "noise_moments", "splitmix64"]

#: The noise laws implemented.
NOISES = ("gaussian", "exponential", "uniform")
_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


def splitmix64(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser on uint64 values (wrapping arithmetic), elementwise.

    >>> int(splitmix64(np.array([0], dtype=np.uint64))[0])
    16294208416658607535
    """
    z = np.asarray(z, dtype=np.uint64) + _M1
    z = (z ^ (z >> np.uint64(30))) * _M2
    z = (z ^ (z >> np.uint64(27))) * _M3
    return z ^ (z >> np.uint64(31))


def noise_moments(noise: str, sigma: float) -> tuple[float, float]:
    """Exact mean and variance of xi under the law ``noise`` with parameter ``sigma``.

    Clipped gaussian, a = 1/sigma: E xi = Phi(a) + sigma phi(a),
    E xi^2 = (1 + sigma^2) Phi(a) + sigma phi(a) (integrals of (1 + sigma z)^k over z > -a).

    >>> [round(v, 4) for v in noise_moments("gaussian", 1.0)]
    [1.0833, 0.7511]
    """
    check_choice("noise", "noise_moments", noise, NOISES)
    sigma = check_real("sigma", "noise_moments", sigma, low=0)
    if sigma == 0:
        return 1.0, 0.0
    if noise == "exponential":
        return 1.0, 1.0
    if noise == "uniform":
        return 1.0, sigma**2 / 3
    a = 1.0 / sigma
    phi = math.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
    mean = float(ndtr(a)) + sigma * phi
    second = (1 + sigma**2) * float(ndtr(a)) + sigma * phi
    return mean, second - mean**2


class NoisyOracle:
    r"""A persistent noisy value oracle f~(S) = xi_S f(S) with a query counter.

    Args:
        f: the set function (a callable on masks or index arrays, ideally with a vectorised
            ``evaluate(masks)``), values >= 0.
        noise: ``"gaussian"``, ``"exponential"`` or ``"uniform"``.
        sigma: the noise scale (>= 0; exactly 1 for ``"exponential"``; <= 1 for ``"uniform"``).
        seed: fixes the Zobrist keys and the hash salt, hence every xi_S.

    ``oracle(S)`` returns f~(S) for one set, ``oracle.evaluate(masks)`` for a batch (batch, n);
    both add the number of sets to ``n_queries``. NaN policy: f must return finite values >= 0
    (else ValueError); sets are boolean masks or integer indices, so NaN cannot enter.

    >>> from noisysubmod.functions import WeightedCoverage
    >>> f = WeightedCoverage.random(n=10, universe=30, density=0.2, seed=0)
    >>> noisy = NoisyOracle(f, noise="exponential", sigma=1.0, seed=1)
    >>> noisy([1, 4]) == noisy([4, 1]) == noisy(frozenset({1, 4})), noisy.n_queries
    (True, 3)
    """

    def __init__(
        self, f: Callable[..., Any], noise: str = "exponential", sigma: float = 1.0, seed: int = 0
    ) -> None:
        owner = "NoisyOracle"
        self.f = check_callable("f", owner, f)
        self.noise = check_choice("noise", owner, noise, NOISES)
        self.sigma = check_real("sigma", owner, sigma, low=0)
        if noise == "exponential" and self.sigma != 1.0:
            raise param_error("sigma", owner, "1.0 for the exponential law", sigma)
        if noise == "uniform" and self.sigma > 1.0:
            raise param_error("sigma", owner, "in [0, 1] for the uniform law", sigma)
        self.seed = check_int("seed", owner, seed, low=0)
        n = getattr(f, "n", None)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise param_error("f", owner, "a set function with a ground-set size .n >= 1", n)
        self.n = int(n)
        self.is_monotone = bool(getattr(f, "is_monotone", False))
        rng = np.random.default_rng([self.seed, 0x5EED])
        self.keys = rng.integers(0, 2**64, size=self.n, dtype=np.uint64, endpoint=False)
        self.salt = np.uint64(rng.integers(0, 2**64, dtype=np.uint64, endpoint=False))
        self.n_queries = 0

    def hashes(self, masks: np.ndarray) -> np.ndarray:
        """Z(S) = XOR of the Zobrist keys of S, per row of ``masks`` (batch, n)."""
        return np.bitwise_xor.reduce(np.where(masks, self.keys, np.uint64(0)), axis=1)

    def xi(self, masks: np.ndarray) -> np.ndarray:
        """The persistent multipliers xi_S (batch,) of the rows of ``masks`` (no query counted)."""
        masks = np.asarray(masks, dtype=bool).reshape(-1, self.n)
        return self._xi_of_hash(self.hashes(masks))

    def _xi_of_hash(self, z: np.ndarray) -> np.ndarray:
        if self.sigma == 0:
            return np.ones(z.shape)
        bits = splitmix64(z ^ self.salt) >> np.uint64(11)
        u = (bits.astype(np.float64) + 0.5) * 2.0**-53
        if self.noise == "exponential":
            return -np.log1p(-u)
        if self.noise == "uniform":
            return 1.0 - self.sigma + 2.0 * self.sigma * u
        return np.maximum(0.0, 1.0 + self.sigma * ndtri(u))

    def evaluate(self, masks: np.ndarray) -> np.ndarray:
        """f~(S) for every row of ``masks`` (batch, n); counts ``batch`` queries."""
        masks = np.asarray(masks, dtype=bool)
        if masks.ndim != 2 or masks.shape[1] != self.n:
            raise param_error(
                "masks", "NoisyOracle.evaluate", f"a boolean array (batch, {self.n})", masks.shape
            )
        self.n_queries += len(masks)
        return evaluate(self.f, masks, "NoisyOracle") * self.xi(masks)

    def extensions(self, masks: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(f~(S) (batch,), f~(S + e) (batch, len(cand))); counts the distinct sets queried
        (S, and S + e for e notin S). Z(S + e) = Z(S) XOR k_e, so the noise costs O(1) per pair."""
        masks = np.asarray(masks, dtype=bool)
        base, ext = extensions(self.f, masks, cand, "NoisyOracle")
        inside = masks[:, cand]
        self.n_queries += len(masks) + int((~inside).sum())
        z = self.hashes(masks)
        z_ext = np.where(inside, z[:, None], z[:, None] ^ self.keys[cand][None])
        return base * self._xi_of_hash(z), ext * self._xi_of_hash(z_ext)

    def __call__(self, S: Any) -> float:
        """f~(S) for one set S (indices, a set or a mask (n,)); counts one query."""
        return float(self.evaluate(as_mask(S, self.n, "S", "NoisyOracle")[None])[0])

    def reset(self) -> None:
        """Set the query counter back to 0 (the noise stays the same)."""
        self.n_queries = 0
