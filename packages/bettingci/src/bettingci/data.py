"""The [0, 1]-valued distributions of the reproduction, with their exact mean and variance.

- ``bernoulli(p)``: :math:`\\mu = p`, :math:`\\sigma^2 = p(1-p)`.
- ``beta(a, b)``: :math:`\\mu = a/(a+b)`, :math:`\\sigma^2 = ab/((a+b)^2(a+b+1))`.
- ``uniform()``: :math:`\\mu = 1/2`, :math:`\\sigma^2 = 1/12`.
- ``two_point(lo, hi, p)``: :math:`P(X = hi) = p`, else lo; :math:`\\mu = lo + p(hi-lo)`,
  :math:`\\sigma^2 = p(1-p)(hi-lo)^2` (the low-variance case: Hoeffding pays for the range
  1, variance-adaptive bounds for :math:`\\sigma`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from paperkit import param_error

__all__ = ["DISTRIBUTIONS", "Distribution", "bernoulli", "beta", "two_point", "uniform"]


@dataclass(frozen=True)
class Distribution:
    """A distribution on [0, 1]: its name, mean, variance and a sampler ``draw(rng, (R, n))``."""

    name: str
    mean: float
    var: float
    draw: Callable[[np.random.Generator, tuple[int, int]], np.ndarray]
    binary: bool = False

    def sample(self, rng: np.random.Generator, R: int, n: int) -> np.ndarray:
        """R i.i.d. samples of size n, shape (R, n), float64."""
        return np.asarray(self.draw(rng, (R, n)), dtype=np.float64)

    def oracle_width(self, n: int, delta: float) -> float:
        """The optimal one-sided width :math:`\\sqrt{2\\sigma^2\\log(1/\\delta)/n}`."""
        return float(np.sqrt(2 * self.var * np.log(1 / delta) / n))


def bernoulli(p: float) -> Distribution:
    """Bernoulli(p) on {0, 1}."""
    if not 0.0 <= p <= 1.0:
        raise param_error("p", "bernoulli", "in [0, 1]", p)
    return Distribution(
        f"Bernoulli({p:g})", p, p * (1 - p), lambda g, s: g.random(s) < p, binary=True
    )


def beta(a: float, b: float) -> Distribution:
    """Beta(a, b)."""
    if not (a > 0 and b > 0):
        raise param_error("a, b", "beta", "positive", (a, b))
    var = a * b / ((a + b) ** 2 * (a + b + 1))
    return Distribution(f"Beta({a:g},{b:g})", a / (a + b), var, lambda g, s: g.beta(a, b, s))


def uniform() -> Distribution:
    """Uniform on [0, 1]."""
    return Distribution("Uniform", 0.5, 1 / 12, lambda g, s: g.random(s))


def two_point(lo: float = 0.45, hi: float = 0.55, p: float = 0.5) -> Distribution:
    """The two-point law :math:`P(X = hi) = p`, :math:`P(X = lo) = 1 - p`."""
    if not (0.0 <= lo < hi <= 1.0 and 0.0 <= p <= 1.0):
        raise param_error("lo, hi, p", "two_point", "0 <= lo < hi <= 1, p in [0, 1]", (lo, hi, p))
    return Distribution(
        f"TwoPoint({lo:g},{hi:g})",
        lo + p * (hi - lo),
        p * (1 - p) * (hi - lo) ** 2,
        lambda g, s: np.where(g.random(s) < p, hi, lo),
    )


#: Constructors by name.
DISTRIBUTIONS = {"bernoulli": bernoulli, "beta": beta, "uniform": uniform, "two_point": two_point}
