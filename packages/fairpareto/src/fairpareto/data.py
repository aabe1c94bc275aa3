"""The data of the reproduction: calibrated synthetic scores, and the bundled ``fair`` data set.

(a) Synthetic: A ~ Bernoulli(alpha); the calibrated score c ~ Beta with mean 0.35 in group 0 and
    0.6 in group 1 (concentration a + b = 4); Y ~ Bernoulli(c), so c = P(Y = 1 | c, A) is
    calibrated by construction. The feature a classifier sees is logit(c) and A.
(b) statsmodels ``fair`` (6366 women, Fair 1978): Y = 1{affairs > 0}, A = 1{age >= 32}, features
    the other columns (marriage rating, years married, children, religiousness, education,
    occupations). Ships inside statsmodels; nothing is downloaded.
"""

from __future__ import annotations

import numpy as np

from paperkit import check_int, check_real

__all__ = ["fair_data", "synthetic_scores"]


def synthetic_scores(
    n: int = 4000, alpha: float = 0.3, seed: int = 0, concentration: float = 4.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X (n, 2), y (n,), A (n,), c (n,))``: the calibrated synthetic data (a) above.

    NaN policy: NaN or inf arguments are refused (ValueError).

    >>> X, y, A, c = synthetic_scores(1000, seed=0)
    >>> X.shape, bool(abs(c[A == 1].mean() - 0.6) < 0.03)
    ((1000, 2), True)
    """
    owner = "synthetic_scores"
    n = check_int("n", owner, n, low=2, high=10**8)
    alpha = check_real("alpha", owner, alpha, low=0, high=1, low_open=True, high_open=True)
    seed = check_int("seed", owner, seed, low=0)
    conc = check_real("concentration", owner, concentration, low=0, low_open=True)
    rng = np.random.default_rng(seed)
    A = (rng.random(n) < alpha).astype(int)
    mean = np.where(A == 1, 0.6, 0.35)
    c = rng.beta(conc * mean, conc * (1.0 - mean))
    c = np.clip(c, 1e-6, 1.0 - 1e-6)
    y = (rng.random(n) < c).astype(int)
    X = np.column_stack([np.log(c / (1.0 - c)), A])
    return X, y, A, c


def fair_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """``(X (6366, 7), y, A, feature names)`` of the statsmodels ``fair`` data set (b) above."""
    from statsmodels.datasets import fair

    frame = fair.load_pandas().data
    y = (frame["affairs"].to_numpy() > 0).astype(int)
    A = (frame["age"].to_numpy() >= 32).astype(int)
    names = [c for c in frame.columns if c not in ("affairs", "age")]
    return frame[names].to_numpy(dtype=float), y, A, names
