"""Conditional-independence tests: the generalised covariance measure (GCM) and a KCI wrapper.

GCM (Shah & Peters 2020, "The hardness of conditional independence testing and the generalised
covariance measure"), as used by the paper for T-MEX. To test X ⟂ Y | Z:

1. regress every column of X on Z and every column of Y on Z (``tmex.regress``) → residuals
   R_X (n, dx), R_Y (n, dy);
2. form the products R_{i,(a,b)} = R_X[i, a] · R_Y[i, b] (L = dx·dy columns) and the
   statistics T_l = √n · mean(R_l) / sd(R_l) (sd with ddof = 0);
3. ``test_type="max"``: S = max_l |T_l|, p-value from a Gaussian multiplier bootstrap,
   S*_b = max_l |Σ_i e_bi (R_il − mean_l)| / (√n sd_l) with e_bi ~ N(0, 1),
   p = (1 + #{b : S*_b ≥ S}) / (B + 1);
   ``test_type="quadratic"``: the Wald statistic n · m̄ᵀ Σ⁺ m̄ against χ² with rank(Σ) degrees of
   freedom; with one column it is T², i.e. the univariate two-sided normal test
   p = 2(1 − Φ(|T|)).

Degenerate columns: a residual column with ‖R_l‖ ≤ 1e-8 · ‖y_l − ȳ_l‖ (the column is a function
of Z, up to rounding) carries no evidence; every product built from it gets T = 0 and is left
out of the maximum/quadratic form. If every column of X or of Y is degenerate the test returns
p = 1 and statistic 0. Rounding-level residuals are never fed to mean/sd, so p is never NaN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from paperkit import check_choice, check_int
from paperkit.errors import param_error
from tmex._checks import as_rng, matrix
from tmex.regress import REGRESSORS, residualizer

TEST_TYPES = ("max", "quadratic")
#: A residual column is degenerate when its norm is at most this times the centred column's.
DEGENERATE_RTOL = 1e-8


@dataclass(frozen=True)
class CITestResult:
    """The outcome of one conditional-independence test.

    Attributes:
        pvalue: the p-value in [0, 1] (never NaN; 1 when the test has no evidence at all).
        statistic: the test statistic (max |T_l|, the Wald statistic, or KCI's).
        method: which test produced it, e.g. ``"gcm-max-linear"``.
    """

    pvalue: float
    statistic: float
    method: str


def check_regressor(owner: str, regressor: Any) -> Any:
    """``regressor``: one of ``REGRESSORS`` or an object with ``fit`` and ``predict``."""
    if isinstance(regressor, str):
        return check_choice("regressor", owner, regressor, REGRESSORS)
    if hasattr(regressor, "fit") and hasattr(regressor, "predict"):
        return regressor
    raise param_error(
        "regressor",
        owner,
        "'linear', 'krr', 'rf' or a scikit-learn regressor",
        regressor,
        cls=TypeError,
    )


def degenerate(residuals: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Columns whose residual norm is at most ``DEGENERATE_RTOL`` times the centred target's."""
    scale = np.linalg.norm(target - target.mean(axis=0), axis=0)
    return np.linalg.norm(residuals, axis=0) <= DEGENERATE_RTOL * scale


def gcm_from_residuals(
    rx: np.ndarray,
    ry: np.ndarray,
    dead_x: np.ndarray,
    dead_y: np.ndarray,
    test_type: str,
    multipliers: np.ndarray | None,
) -> tuple[float, float]:
    """(p-value, statistic) of the GCM from residuals; ``multipliers`` (B, n) for ``"max"``."""
    n = len(rx)
    live_x, live_y = rx[:, ~dead_x], ry[:, ~dead_y]
    if live_x.shape[1] == 0 or live_y.shape[1] == 0:
        return 1.0, 0.0
    prod = (live_x[:, :, None] * live_y[:, None, :]).reshape(n, -1)
    mean, sd = prod.mean(axis=0), prod.std(axis=0)
    ok = sd > 0
    if not ok.any():
        return 1.0, 0.0
    prod, mean, sd = prod[:, ok], mean[ok], sd[ok]
    if test_type == "quadratic":
        cov = np.atleast_2d(np.cov(prod, rowvar=False, ddof=0))
        stat = float(n * mean @ np.linalg.pinv(cov, hermitian=True) @ mean)
        rank = int(np.linalg.matrix_rank(cov, hermitian=True))
        return float(stats.chi2.sf(stat, df=max(rank, 1))), stat
    stat = float(np.max(np.sqrt(n) * np.abs(mean) / sd))
    boot = np.max(np.abs(multipliers @ ((prod - mean) / sd)) / np.sqrt(n), axis=1)
    return float((1 + np.sum(boot >= stat)) / (len(boot) + 1)), stat


def gcm_test(
    X: Any,
    Y: Any,
    Z: Any = None,
    regressor: Any = "linear",
    test_type: str = "max",
    B: int = 499,
    rng: Any = None,
) -> CITestResult:
    """Generalised covariance measure test of X ⟂ Y | Z (see the module docstring for the math).

    Args:
        X: (n,) or (n, dx) array. Y: (n,) or (n, dy) array.
        Z: (n,) or (n, dz) conditioning array, or None (then the test is of X ⟂ Y).
        regressor: ``"linear"``, ``"krr"``, ``"rf"`` or a scikit-learn regressor.
        test_type: ``"max"`` (Gaussian multiplier bootstrap, B draws) or ``"quadratic"``.
        B: bootstrap draws for ``"max"``. rng: None, a seed or a numpy Generator.

    NaN policy: NaN or inf in X, Y or Z is refused with a ValueError; the p-value is never NaN.

    >>> rng = np.random.default_rng(0)
    >>> z = rng.standard_normal(500)
    >>> x, y = z + rng.standard_normal(500), z + rng.standard_normal(500)
    >>> gcm_test(x, y, z, rng=1).pvalue > 0.05, gcm_test(x, y, None, rng=1).pvalue < 0.01
    (True, True)
    """
    owner = "gcm_test"
    dims: dict = {}
    X = matrix("X", owner, X, dims)
    Y = matrix("Y", owner, Y, dims)
    Z = None if Z is None else matrix("Z", owner, Z, dims)
    regressor = check_regressor(owner, regressor)
    check_choice("test_type", owner, test_type, TEST_TYPES)
    B = check_int("B", owner, B, low=1)
    gen = as_rng("rng", owner, rng)
    n = len(X)
    if n < 3:
        raise param_error("X", owner, "at least 3 samples", n)
    multipliers = gen.standard_normal((B, n)) if test_type == "max" else None
    resid = residualizer(regressor, Z, seed=int(gen.integers(2**31)))
    rx, ry = resid(X), resid(Y)
    p, stat = gcm_from_residuals(
        rx, ry, degenerate(rx, X), degenerate(ry, Y), test_type, multipliers
    )
    name = regressor if isinstance(regressor, str) else type(regressor).__name__
    return CITestResult(p, stat, f"gcm-{test_type}-{name}")


def kci_test(X: Any, Y: Any, Z: Any = None) -> CITestResult:
    """Kernel conditional-independence test (Zhang et al. 2011) through causal-learn's
    ``KCI_CInd`` / ``KCI_UInd`` (median-heuristic Gaussian kernels). Needs the optional
    ``causal-learn`` package; raises ImportError naming it when it is not installed.

    NaN policy: NaN or inf in X, Y or Z is refused with a ValueError.
    """
    owner = "kci_test"
    dims: dict = {}
    X = matrix("X", owner, X, dims)
    Y = matrix("Y", owner, Y, dims)
    Z = None if Z is None else matrix("Z", owner, Z, dims)
    try:
        from causallearn.utils.KCI.KCI import KCI_CInd, KCI_UInd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "kci_test needs the optional package causal-learn: pip install causal-learn"
        ) from exc
    if Z is None:
        p, stat = KCI_UInd().compute_pvalue(X, Y)
    else:
        p, stat = KCI_CInd().compute_pvalue(X, Y, Z)
    return CITestResult(float(p), float(stat), "kci")
