"""Strongly proper composite surrogate losses (paper, Sec. 3; Agarwal 2014, Reid & Williamson 2010).

A loss :math:`\\psi(y, u)` with link :math:`\\lambda` is *strongly proper composite* with modulus
:math:`\\kappa` when :math:`\\arg\\min_u \\mathbb E_{Y\\sim p}\\psi(Y,u)=\\lambda^{-1}(T(p))` and

.. math:: \\mathbb E_p\\psi(Y,u)-\\min_{u'}\\mathbb E_p\\psi(Y,u')\\ \\ge\\ \\tfrac\\kappa2
          \\lVert\\lambda(u)-T(p)\\rVert^2 .

Binary losses take ``y`` in [0, 1] (a label or a soft target) and scores ``u`` of shape ``(n,)``;
multiclass losses take integer labels ``(n,)`` and scores ``(n, K)``. Every loss gives the
per-sample value, the gradient in ``u`` and the Hessian in ``u`` (``(n,)`` for binary, ``(n, K, K)``
for multiclass). NaN in ``u`` propagates (these are inner functions; the estimators refuse NaN).

>>> import numpy as np
>>> L = get("logistic")
>>> float(L.link(np.array(0.0))), L.kappa
(0.5, 4.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_softmax, logit, softmax

from paperkit import check_choice, check_int

__all__ = ["BINARY", "MULTICLASS", "Loss", "get"]

_CLIP = 350.0  # exp(2 * 350) is finite in float64


@dataclass(frozen=True)
class Loss:
    """One surrogate: its name, kind (``"binary"`` or ``"multiclass"``) and analytic κ."""

    name: str
    kind: str
    kappa: float

    # ---- binary ---------------------------------------------------------------------------
    def value(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Per-sample :math:`\\psi(y, u)`."""
        if self.kind == "multiclass":
            return self._mc_value(y, u)
        y, u = np.asarray(y, float), np.asarray(u, float)
        if self.name == "logistic":  # y log(1+e^-u) + (1-y) log(1+e^u)
            return y * np.logaddexp(0.0, -u) + (1 - y) * np.logaddexp(0.0, u)
        if self.name == "exponential":  # y e^-u + (1-y) e^u
            v = np.clip(u, -_CLIP, _CLIP)
            return y * np.exp(-v) + (1 - y) * np.exp(v)
        return (u - y) ** 2  # squared

    def grad(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        """:math:`\\partial_u\\psi(y, u)`, same shape as ``u``."""
        if self.kind == "multiclass":
            return self._mc_grad(y, u)
        y, u = np.asarray(y, float), np.asarray(u, float)
        if self.name == "logistic":
            return expit(u) - y
        if self.name == "exponential":
            v = np.clip(u, -_CLIP, _CLIP)
            return -y * np.exp(-v) + (1 - y) * np.exp(v)
        return 2.0 * (u - y)

    def hess(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        """:math:`\\partial_u^2\\psi(y,u)`: ``(n,)`` for binary, ``(n, K, K)`` for multiclass."""
        if self.kind == "multiclass":
            return self._mc_hess(y, u)
        y, u = np.asarray(y, float), np.asarray(u, float)
        if self.name == "logistic":
            s = expit(u)
            return s * (1 - s)
        if self.name == "exponential":
            v = np.clip(u, -_CLIP, _CLIP)
            return y * np.exp(-v) + (1 - y) * np.exp(v)
        return np.full_like(u, 2.0)

    def link(self, u: np.ndarray) -> np.ndarray:
        """:math:`\\lambda(u)`: score to statistic (sigmoid, σ(2u), identity, softmax)."""
        u = np.asarray(u, float)
        if self.name == "logistic":
            return expit(u)
        if self.name == "exponential":
            return expit(2.0 * u)
        if self.name == "softmax_ce":
            return softmax(u, axis=-1)
        return u.copy()  # squared losses: identity (predictions are projected, see estimators)

    def inverse_link(self, t: np.ndarray) -> np.ndarray:
        """:math:`\\lambda^{-1}(t)` (softmax: the centred log, defined up to a constant)."""
        t = np.asarray(t, float)
        if self.name == "logistic":
            return logit(t)
        if self.name == "exponential":
            return 0.5 * logit(t)
        if self.name == "softmax_ce":
            logs = np.log(t)
            return logs - logs.mean(axis=-1, keepdims=True)
        return t.copy()

    # ---- multiclass -----------------------------------------------------------------------
    def _onehot(self, y: np.ndarray, K: int) -> np.ndarray:
        y = np.asarray(y)
        if y.ndim == 2:  # a distribution over classes (soft target)
            return y.astype(float)
        return np.eye(K)[y.astype(int)]

    def _mc_value(self, y, u):
        u = np.asarray(u, float)
        e = self._onehot(y, u.shape[-1])
        if self.name == "softmax_ce":
            return -(e * log_softmax(u, axis=-1)).sum(-1)
        return ((u - e) ** 2).sum(-1)

    def _mc_grad(self, y, u):
        u = np.asarray(u, float)
        e = self._onehot(y, u.shape[-1])
        if self.name == "softmax_ce":
            return softmax(u, axis=-1) - e
        return 2.0 * (u - e)

    def _mc_hess(self, y, u):
        u = np.asarray(u, float)
        K = u.shape[-1]
        if self.name == "softmax_ce":
            p = softmax(u, axis=-1)
            return np.einsum("nk,kl->nkl", p, np.eye(K)) - p[:, :, None] * p[:, None, :]
        return np.broadcast_to(2.0 * np.eye(K), (u.shape[0], K, K)).copy()

    # ---- strong properness, numerically -----------------------------------------------------
    def kappa_numeric(self, grid: int = 200, K: int = 3, seed: int = 0) -> float:
        """κ measured as :math:`\\min` of regret / (½‖λ(u) − T(p)‖²) over a ``grid`` × ``grid``
        set of (p, u): for binary losses p and λ(u) on interleaved grids of (0, 1); for
        multiclass losses ``grid`` points p and ``grid`` points q = λ(u) drawn from the
        Dirichlet(1, ..., 1) simplex on ``K`` classes (seeded). The exact minimiser
        :math:`u^*=\\lambda^{-1}(T(p))` gives the minimum risk."""
        grid = check_int("grid", "Loss.kappa_numeric", grid, low=2, high=2000)
        K = check_int("K", "Loss.kappa_numeric", K, low=2, high=50)
        seed = check_int("seed", "Loss.kappa_numeric", seed, low=0)
        if self.kind == "binary":
            p = (np.arange(grid) + 0.5) / grid * 0.99 + 0.005
            q = (np.arange(grid) + 0.25) / grid * 0.99 + 0.005
            u = self.inverse_link(q)
            risk = lambda pp, uu: pp * self.value(1.0, uu) + (1 - pp) * self.value(0.0, uu)  # noqa: E731
            P, U = np.meshgrid(p, u, indexing="ij")
            regret = risk(P, U) - risk(p, self.inverse_link(p))[:, None]
            dist = 0.5 * (self.link(U) - P) ** 2
        else:
            rng = np.random.default_rng(seed)
            p = rng.dirichlet(np.ones(K), grid)
            q = rng.dirichlet(np.ones(K), grid)
            u = self.inverse_link(q)
            uu = np.repeat(u, grid, axis=0)
            pp = np.tile(p, (grid, 1))
            risk_u = self.value(pp, uu)
            risk_star = self.value(pp, self.inverse_link(pp))
            regret = risk_u - risk_star
            dist = 0.5 * ((self.link(uu) - pp) ** 2).sum(-1)
        keep = dist > 1e-12
        return float(np.min(regret[keep] / dist[keep]))


#: Binary losses (statistic η = P(Y=1|x)), with their analytic κ.
BINARY = {
    "logistic": Loss("logistic", "binary", 4.0),  # Pinsker: KL(p, q) >= 2 (p - q)^2
    "exponential": Loss("exponential", "binary", 4.0),
    "squared": Loss("squared", "binary", 2.0),
}
#: Multiclass losses (statistic p ∈ Δ_K), with their analytic κ.
MULTICLASS = {
    "softmax_ce": Loss("softmax_ce", "multiclass", 1.0),  # KL >= ½‖p−q‖₁² >= ½‖p−q‖₂²
    "multiclass_squared": Loss("multiclass_squared", "multiclass", 2.0),
}


def get(loss: str) -> Loss:
    """The surrogate called ``loss``: ``"logistic"``, ``"exponential"``, ``"squared"``,
    ``"softmax_ce"`` or ``"multiclass_squared"`` (ValueError otherwise).

    >>> get("softmax_ce").kappa
    1.0
    """
    check_choice("loss", "losses.get", loss, [*BINARY, *MULTICLASS])
    return {**BINARY, **MULTICLASS}[loss]
