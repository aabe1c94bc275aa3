"""The contextual stochastic block model CSBM(pi, B, U, Sigma) of the paper's setting (Section 2).

K communities with proportions ``pi``; an edge between nodes of communities c and c' with
probability ``nu * B[c, c'] / n``; node features ``x_i = U[z_i] + Sigma^{1/2} xi_i`` with
``xi_i ~ N(0, I_d)``. ``M = B diag(pi)``: ``nu * M[c, c']`` is the expected number of class-c'
neighbours of a class-c node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from paperkit import param_error
from paperkit.checks import check_array, describe

__all__ = ["CSBMParams"]

_OWNER = "CSBMParams"
_TOL = 1e-8


def _symmetric(name: str, value: np.ndarray) -> None:
    scale = max(1.0, float(np.abs(value).max()))
    if not np.allclose(value, value.T, atol=_TOL * scale, rtol=0):
        raise param_error(name, _OWNER, "a symmetric matrix", describe(value))


@dataclass
class CSBMParams:
    """Parameters of a CSBM, validated on construction (arrays converted to float64).

    Attributes:
        pi: ``(K,)`` community proportions (non-negative, summing to 1).
        B: ``(K, K)`` symmetric non-negative connectivity; ``P(i ~ j) = nu B[z_i, z_j] / n``.
        U: ``(K, d)`` class means of the features, row c is ``mu_c``.
        Sigma: ``(d, d)`` symmetric positive semi-definite feature covariance.

    NaN or inf in any array raises ``ValueError``; non-numeric arrays raise ``TypeError``.

    >>> p = CSBMParams([0.5, 0.5], [[2.0, 1.0], [1.0, 2.0]], [[1.0], [-1.0]], [[0.25]])
    >>> p.M.tolist()
    [[1.0, 0.5], [0.5, 1.0]]
    """

    pi: Any
    B: Any
    U: Any
    Sigma: Any

    def __post_init__(self) -> None:
        dims: dict[str, tuple[int, str]] = {}
        pi = check_array("pi", _OWNER, self.pi, shape=("K",), dims=dims).astype(float)
        B = check_array("B", _OWNER, self.B, shape=("K", "K"), dims=dims).astype(float)
        U = check_array("U", _OWNER, self.U, shape=("K", "d"), dims=dims).astype(float)
        Sigma = check_array("Sigma", _OWNER, self.Sigma, shape=("d", "d"), dims=dims)
        Sigma = Sigma.astype(float)
        if (pi < 0).any() or abs(pi.sum() - 1.0) > 1e-6:
            raise param_error("pi", _OWNER, "a probability vector (>= 0, sum 1)", describe(pi))
        if (B < 0).any():
            raise param_error("B", _OWNER, "non-negative", describe(B))
        _symmetric("B", B)
        if not (B > 0).any():
            raise param_error("B", _OWNER, "not all zero", describe(B))
        _symmetric("Sigma", Sigma)
        low = float(np.linalg.eigvalsh((Sigma + Sigma.T) / 2).min())
        if low < -1e-10 * max(1.0, float(np.abs(Sigma).max())):
            raise param_error("Sigma", _OWNER, "positive semi-definite", describe(Sigma))
        self.pi, self.B, self.U, self.Sigma = pi / pi.sum(), (B + B.T) / 2, U, (Sigma + Sigma.T) / 2

    @property
    def K(self) -> int:  # noqa: N802 - the paper's symbol
        """Number of communities."""
        return int(self.pi.shape[0])

    @property
    def d(self) -> int:
        """Feature dimension."""
        return int(self.U.shape[1])

    @property
    def M(self) -> np.ndarray:  # noqa: N802 - the paper's symbol
        """``M = B diag(pi)``: ``nu M[c, c']`` = mean number of class-c' neighbours of class c."""
        return self.B * self.pi[None, :]

    def with_pi(self, pi: np.ndarray) -> CSBMParams:
        """The same model with proportions ``pi`` (e.g. the realised ``n_c / n``)."""
        return CSBMParams(np.asarray(pi, float), self.B, self.U, self.Sigma)

    def permuted(self, perm: Any) -> CSBMParams:
        """The same model with communities relabelled: new community c is old ``perm[c]``."""
        p = np.asarray(perm)
        if sorted(p.tolist()) != list(range(self.K)):
            raise param_error("perm", "CSBMParams.permuted", "a permutation of range(K)", p)
        return CSBMParams(self.pi[p], self.B[np.ix_(p, p)], self.U[p], self.Sigma)
