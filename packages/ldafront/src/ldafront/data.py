"""Data of the reproduction (synthetic, as in the
paper's simulations): a synthetic population with a known posterior,
and the statsmodels ``fair`` survey data.

Synthetic (a): A ~ Bernoulli(0.3), x in R^10 ~ N(0.8 A e_1, I), and

    eta(x, a) = sigma(w . x + b + 0.5 a x_2 x_3),  w = (2, w_2..w_10), w_j ~ N(0, 0.5^2), b = 0,

(x_2, x_3 the second and third coordinates): a mild interaction the law does not model, with
Delta_0 about 0.2 and V about 0.6. The Bayes frontier is computable from eta.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperkit import check_array, check_int, check_memory, check_real, param_error

__all__ = ["SyntheticLDA", "fair_data"]


@dataclass(frozen=True)
class SyntheticLDA:
    """The synthetic population; ``make(seed)`` draws the weights w, ``sample(n, rng)`` draws
    ``(X (n, 10), y (n,), A (n,), eta (n,))``."""

    w: np.ndarray
    p1: float = 0.3
    shift: float = 0.8
    interaction: float = 0.5
    bias: float = 0.0

    def __post_init__(self) -> None:
        owner = "SyntheticLDA"
        w = check_array("w", owner, self.w, ndim=1).astype(float)
        if w.size < 3:
            raise param_error("w", owner, "at least 3 weights (x_2 x_3 enters eta)", w.size)
        object.__setattr__(self, "w", w)
        p1 = check_real("p1", owner, self.p1, low=0, high=1, low_open=True, high_open=True)
        object.__setattr__(self, "p1", p1)
        for name in ("shift", "interaction", "bias"):
            object.__setattr__(self, name, check_real(name, owner, getattr(self, name)))

    @classmethod
    def make(cls, seed: int = 0, *, p1: float = 0.3, interaction: float = 0.5) -> SyntheticLDA:
        """Weights w = (2, N(0, 0.5^2) x 9) from ``seed``. NaN and inf refused.

        >>> SyntheticLDA.make(0).w.shape
        (10,)
        """
        seed = check_int("seed", "SyntheticLDA.make", seed, low=0)
        p1 = check_real("p1", "SyntheticLDA.make", p1, low=0, high=1, low_open=True, high_open=True)
        interaction = check_real("interaction", "SyntheticLDA.make", interaction)
        rng = np.random.default_rng([seed, 53])
        w = np.concatenate([[2.0], rng.normal(0.0, 0.5, 9)])
        return cls(w=w, p1=p1, interaction=interaction)

    def posterior(self, X: np.ndarray, A: np.ndarray) -> np.ndarray:
        """eta(x, a) = sigma(w . x + b + interaction * a * x_2 * x_3) (no checks: internal)."""
        z = X @ self.w + self.bias + self.interaction * A * X[:, 1] * X[:, 2]
        return 0.5 * (1.0 + np.tanh(0.5 * z))

    def sample(
        self, n: int, rng: np.random.Generator | int = 0
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``n`` draws: features X (n, 10), labels y (n,) in {0, 1}, groups A (n,), eta (n,).

        >>> X, y, A, eta = SyntheticLDA.make(0).sample(5, 0)
        >>> X.shape, y.shape, bool(np.all((eta > 0) & (eta < 1)))
        ((5, 10), (5,), True)
        """
        n = check_int("n", "SyntheticLDA.sample", n, low=1)
        check_memory("n", "SyntheticLDA.sample", n, 8.0 * n * (self.w.size + 4))
        if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
            rng = np.random.default_rng(check_int("rng", "SyntheticLDA.sample", rng, low=0))
        elif not isinstance(rng, np.random.Generator):
            raise param_error(
                "rng",
                "SyntheticLDA.sample",
                "a numpy Generator or a seed",
                type(rng).__name__,
                cls=TypeError,
            )
        A = (rng.random(n) < self.p1).astype(np.int64)
        X = rng.standard_normal((n, self.w.size))
        X[:, 0] += self.shift * A
        eta = self.posterior(X, A)
        y = (rng.random(n) < eta).astype(float)
        return X, y, A, eta


def fair_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """statsmodels' bundled ``fair`` survey (Fair, 1978; 6 366 women): Y = 1{affairs > 0},
    A = 1{age >= 32}, X the other 7 columns (rate_marriage, yrs_married, children, religious,
    educ, occupation, occupation_husb) as floats. Returns ``(X (n, 7), y (n,), A (n,))``.

    >>> X, y, A = fair_data()
    >>> X.shape
    (6366, 7)
    """
    from statsmodels.datasets import fair

    frame = fair.load_pandas().data
    y = (frame["affairs"].to_numpy() > 0).astype(float)
    A = (frame["age"].to_numpy() >= 32).astype(np.int64)
    X = frame.drop(columns=["affairs", "age"]).to_numpy(dtype=float)
    return X, y, A
