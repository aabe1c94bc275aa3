"""The T-MEX score (paper, Sec. 4: test-based measurement exclusivity).

For latents Z (n, K), representation blocks Ẑ_1..Ẑ_m, observed covariates V (n, p) and a
hypothesised measurement matrix W ∈ {0, 1}^{m×K} (W_ik = 1 iff block i measures latent k):

    p_ik  = p-value of  H0_ik : Ẑ_i ⟂ Z_k | (Z_{−k}, V),
    Ŵ_ik  = 1[p_ik < α],
    T-MEX = Σ_ik |Ŵ_ik − W_ik| ∈ {0, …, mK},   normalised T-MEX = T-MEX / (mK).

T-MEX = 0 means the data contradict no entry of the assumed measurement structure. Under a valid
representation the expected score is about α·#{W_ik = 0} (false alarms) plus misses from low
power.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperkit import check_array, check_choice, check_int, check_real
from paperkit.errors import param_error
from tmex._checks import as_rng, blocks, matrix
from tmex.citest import (
    CITestResult,
    check_regressor,
    degenerate,
    gcm_from_residuals,
    kci_test,
)
from tmex.regress import residualizer

CI_TESTS = ("gcm", "kci")


@dataclass(frozen=True)
class TMEXResult:
    """T-MEX and what it is made of.

    Attributes:
        score: Σ_ik |Ŵ_ik − W_ik| (an int in 0..mK).
        normalized: score / (m K).
        W_hat: (m, K) int array, Ŵ_ik = 1[p_ik < α].
        pvalues: (m, K) p-values of H0_ik: Ẑ_i ⟂ Z_k | (Z_{−k}, V).
        W: (m, K) the hypothesised measurement matrix used.
    """

    score: int
    normalized: float
    W_hat: np.ndarray
    pvalues: np.ndarray
    W: np.ndarray

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TMEXResult):
            return NotImplemented
        return (
            self.score == other.score
            and np.array_equal(self.W_hat, other.W_hat)
            and np.array_equal(self.pvalues, other.pvalues)
            and np.array_equal(self.W, other.W)
        )

    __hash__ = None  # type: ignore[assignment]


def _check_W(W: Any, m: int, K: int) -> np.ndarray:
    owner = "tmex_score"
    if W is None:
        if m != K:
            raise param_error(
                "W", owner, f"given when the blocks (m={m}) and latents (K={K}) differ", None
            )
        return np.eye(K, dtype=int)
    W = check_array("W", owner, W, shape=(m, K), kind=None)
    if W.dtype.kind not in "biuf" or not np.isin(W, (0, 1)).all():
        raise param_error("W", owner, "a 0/1 matrix", W)
    return W.astype(int)


def tmex_score(
    Z: Any,
    Z_hat: Any,
    W: Any = None,
    covariates: Any = None,
    alpha: float = 0.05,
    ci_test: str | Callable[..., Any] = "gcm",
    regressor: Any = "linear",
    rng: Any = None,
    test_type: str = "max",
    B: int = 499,
) -> TMEXResult:
    """Test-based measurement-exclusivity score of representation blocks against latents.

    Args:
        Z: (n, K) latents (K ≥ 1).
        Z_hat: (n, m) array (m one-column blocks) or a list of m arrays (n,) / (n, d_i).
        W: (m, K) 0/1 hypothesised measurement matrix; None means the identity (needs m = K).
        covariates: (n,) / (n, p) observed variables of the causal model (e.g. treatment and
            outcome), added to every conditioning set; or None.
        alpha: test level in (0, 1).
        ci_test: ``"gcm"`` (default), ``"kci"`` (optional causal-learn), or a callable
            ``f(x (n, 1), y (n, d_i), cond (n, q) | None) -> CITestResult | float``.
        regressor: GCM regressor, ``"linear"``, ``"krr"``, ``"rf"`` or a scikit-learn regressor.
        rng: None, a seed or a Generator. The GCM's bootstrap multipliers are drawn once per
            latent k (B × n) and shared by the m tests on the same conditioning set, so permuting
            the blocks permutes the p-values exactly.
        test_type: GCM ``"max"`` or ``"quadratic"``. B: bootstrap draws.

    Tests run latent by latent (k outer, block i inner); with the GCM each conditioning set
    (Z_{−k}, V) is regressed on once for all blocks.

    NaN policy: NaN or inf in Z, Z_hat, covariates or W is refused with a ValueError.

    >>> rng = np.random.default_rng(0)
    >>> Z = rng.standard_normal((400, 3))
    >>> tmex_score(Z, 2 * Z + 1, rng=0).score  # each block a function of its latent only
    0
    >>> tmex_score(Z, Z @ np.full((3, 3), 0.2) + 0.6 * Z, rng=0).score
    6
    """
    owner = "tmex_score"
    dims: dict = {}
    Z = check_array("Z", owner, Z, ndim=2, shape=("n", "K"), dims=dims, kind="real")
    Z = np.asarray(Z, dtype=float)
    hats = blocks("Z_hat", owner, Z_hat, dims)
    V = None if covariates is None else matrix("covariates", owner, covariates, dims)
    n, K = Z.shape
    m = len(hats)
    W = _check_W(W, m, K)
    alpha = check_real("alpha", owner, alpha, low=0, high=1, low_open=True, high_open=True)
    if callable(ci_test):
        test = ci_test
    else:
        test = check_choice("ci_test", owner, ci_test, CI_TESTS)
    regressor = check_regressor(owner, regressor)
    check_choice("test_type", owner, test_type, ("max", "quadratic"))
    B = check_int("B", owner, B, low=1)
    gen = as_rng("rng", owner, rng)
    if n < 3:
        raise param_error("Z", owner, "at least 3 samples", n)

    pvalues = np.ones((m, K))
    for k in range(K):
        parts = [Z[:, np.arange(K) != k]] + ([V] if V is not None else [])
        cond = np.column_stack(parts) if sum(p.shape[1] for p in parts) else None
        x = Z[:, [k]]
        if test == "gcm":
            e = gen.standard_normal((B, n)) if test_type == "max" else None
            resid = residualizer(regressor, cond, seed=int(gen.integers(2**31)))
            rx = resid(x)
            dead_x = degenerate(rx, x)
            for i, y in enumerate(hats):
                ry = resid(y)
                pvalues[i, k], _ = gcm_from_residuals(
                    rx, ry, dead_x, degenerate(ry, y), test_type, e
                )
        else:
            call = kci_test if test == "kci" else test
            for i, y in enumerate(hats):
                out = call(x, y, cond)
                p = out.pvalue if isinstance(out, CITestResult) else float(out)
                pvalues[i, k] = 1.0 if np.isnan(p) else p
    W_hat = (pvalues < alpha).astype(int)
    score = int(np.abs(W_hat - W).sum())
    return TMEXResult(score, score / (m * K), W_hat, pvalues, W)
