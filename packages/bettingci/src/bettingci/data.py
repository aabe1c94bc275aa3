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

from paperkit import check_bool, check_real, describe, param_error

__all__ = ["DISTRIBUTIONS", "Distribution", "bernoulli", "beta", "two_point", "uniform"]


@dataclass(frozen=True)
class Distribution:
    """A distribution on [0, 1]: its name, mean, variance and a sampler ``draw(rng, (R, n))``.

    The mean must be finite and in [0, 1] and the variance in [0, mean (1 - mean)] (the largest
    a [0, 1]-valued variable with that mean can have); NaN is refused.
    """

    name: str
    mean: float
    var: float
    draw: Callable[[np.random.Generator, tuple[int, int]], np.ndarray]
    binary: bool = False

    def __post_init__(self) -> None:
        owner = "Distribution"
        if not isinstance(self.name, str):
            raise param_error("name", owner, "a string", describe(self.name), cls=TypeError)
        mean = check_real("mean", owner, self.mean, low=0, high=1)
        check_real("var", owner, self.var, low=0, high=mean * (1 - mean) + 1e-12)
        if not callable(self.draw):
            raise param_error("draw", owner, "a callable", describe(self.draw), cls=TypeError)
        check_bool("binary", owner, self.binary)

    def sample(self, rng: np.random.Generator, R: int, n: int) -> np.ndarray:
        """R i.i.d. samples of size n, shape (R, n), float64."""
        return np.asarray(self.draw(rng, (R, n)), dtype=np.float64)

    def oracle_width(self, n: int, delta: float) -> float:
        """The optimal one-sided width :math:`\\sqrt{2\\sigma^2\\log(1/\\delta)/n}`."""
        return float(np.sqrt(2 * self.var * np.log(1 / delta) / n))


def bernoulli(p: float) -> Distribution:
    """Bernoulli(p) on {0, 1}."""
    p = check_real("p", "bernoulli", p, low=0, high=1)
    return Distribution(
        f"Bernoulli({p:g})", p, p * (1 - p), lambda g, s: g.random(s) < p, binary=True
    )


def beta(a: float, b: float) -> Distribution:
    """Beta(a, b)."""
    a = check_real("a", "beta", a, low=0, low_open=True)
    b = check_real("b", "beta", b, low=0, low_open=True)
    var = a * b / ((a + b) ** 2 * (a + b + 1))
    return Distribution(f"Beta({a:g},{b:g})", a / (a + b), var, lambda g, s: g.beta(a, b, s))


def uniform() -> Distribution:
    """Uniform on [0, 1]."""
    return Distribution("Uniform", 0.5, 1 / 12, lambda g, s: g.random(s))


def two_point(lo: float = 0.45, hi: float = 0.55, p: float = 0.5) -> Distribution:
    """The two-point law :math:`P(X = hi) = p`, :math:`P(X = lo) = 1 - p`."""
    lo = check_real("lo", "two_point", lo, low=0, high=1)
    hi = check_real("hi", "two_point", hi, low=lo, high=1, low_open=True)
    p = check_real("p", "two_point", p, low=0, high=1)
    return Distribution(
        f"TwoPoint({lo:g},{hi:g})",
        lo + p * (hi - lo),
        p * (1 - p) * (hi - lo) ** 2,
        lambda g, s: np.where(g.random(s) < p, hi, lo),
    )


#: Constructors by name.
DISTRIBUTIONS = {"bernoulli": bernoulli, "beta": beta, "uniform": uniform, "two_point": two_point}
