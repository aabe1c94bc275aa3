"""The surrogate action set of one epoch and the default base learner (EXP2 over a policy net).

Surrogate (paper, Sec. 3): with B_k the contexts stored before epoch k,

    ĝ_k(θ) = (1/|B_k|) Σ_{A ∈ B_k} Oracle(A, θ),

whose image spans conv Ω̂_k, the Minkowski average of the conv(A) — a fixed set close to
Ω = E_{A∼D}[conv A] (the mean actions of all policies). For a finite net of directions Θ_k we
precompute Φ_k[θ] = ĝ_k(θ) (M, d) and the second moments C_k[θ] = mean_A Oracle(A,θ)Oracle(A,θ)ᵀ
(M, d, d).

Base learner (EXP2 with exploration; the paper's base learner is a continuous one, see the
README's Deviations): p_t = (1 − γ) q_t + γ ν_k with ν_k the G-optimal design on the rows of Φ_k
and q_t(θ) ∝ exp(−η Σ_{s<t} ⟨Φ_k[θ], ŷ_s⟩). The loss estimate is

    Σ̂_t = Σ_θ p_t(θ) C_k[θ] + λ I,      ŷ_t = Σ̂_t⁻¹ a_t ℓ_t,

unbiased (λ = 0) when A_t is drawn from the empirical law of B_k, since
E[a_t a_tᵀ] = Σ_θ p_t(θ) C_k[θ] and E[ℓ_t | a_t] = ⟨a_t, y_t⟩.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ctxbandit.design import g_optimal_design
from ctxbandit.oracles import Oracle

__all__ = [
    "BaseLearner",
    "EpochParams",
    "Exp2Net",
    "Surrogate",
    "build_surrogate",
    "exp2_net",
    "loss_estimate",
    "policy_net",
]


def policy_net(d: int, n_policies: int, rng: np.random.Generator) -> np.ndarray:
    """The fixed part of the net: the 2d signed basis vectors ±e_i, then n_policies − 2d − 1
    random unit vectors; one row (the last) is left for Ŷ/‖Ŷ‖ and filled per epoch.
    Returns ``(n_policies, d)``; the last row starts as one more random unit vector."""
    rand = rng.standard_normal((n_policies - 2 * d, d))
    rand /= np.linalg.norm(rand, axis=1, keepdims=True)
    return np.vstack([np.eye(d), -np.eye(d), rand])


@dataclass
class Surrogate:
    """The frozen surrogate of one epoch.

    Attributes:
        oracle: the oracle (for :meth:`g` at new directions).
        contexts: the stored contexts B_k (after subsampling).
        thetas: the net Θ_k (M, d).
        Phi: ĝ_k on the net (M, d).
        C: the second moments (M, d, d).
    """

    oracle: Oracle
    contexts: Sequence[Any]
    thetas: np.ndarray
    Phi: np.ndarray
    C: np.ndarray

    def g(self, thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """ĝ_k and the second moments at new directions (L, d): ((L, d), (L, d, d)); costs
        L·|B_k| oracle calls (a continuous base learner's access to Ω̂_k)."""
        X = self.oracle.batch(self.contexts, thetas)
        return X.mean(axis=1), np.matmul(X.transpose(0, 2, 1), X) / X.shape[1]


def build_surrogate(oracle: Oracle, contexts: Sequence[Any], thetas: np.ndarray) -> Surrogate:
    """Φ_k and C_k of the net ``thetas`` over ``contexts`` (|B_k|·M oracle calls, vectorized)."""
    X = oracle.batch(contexts, thetas)  # (M, N, d)
    Phi = X.mean(axis=1)
    C = np.matmul(X.transpose(0, 2, 1), X) / X.shape[1]
    return Surrogate(oracle, contexts, thetas, Phi, C)


def loss_estimate(
    p: np.ndarray, C: np.ndarray, action: np.ndarray, loss: float, reg: float
) -> np.ndarray:
    """ŷ = (Σ_θ p(θ) C[θ] + reg·I)⁻¹ a ℓ (paper, Sec. 3; the estimator of Neu & Olkhovskaya
    2020 with the second moments of the surrogate). ``p`` (M,), ``C`` (M, d, d), ``action``
    (d,). Inputs are trusted (an internal step of :class:`Exp2Net`).

    >>> C = np.stack([np.diag([1.0, 0.0]), np.diag([0.0, 1.0])])
    >>> loss_estimate(np.array([0.5, 0.5]), C, np.array([1.0, 0.0]), 0.3, 0.0)
    array([0.6, 0. ])
    """
    S = np.tensordot(p, C, axes=1)
    S[np.diag_indices_from(S)] += reg
    return np.linalg.solve(S, action * loss)


@dataclass
class EpochParams:
    """What the reduction hands a base learner at the start of epoch k.

    Attributes:
        epoch: k (2, 3, …; epoch 1 is the single round t = 1).
        length: T_k = 2^{k−1}, the epoch's nominal number of rounds.
        eta: the learning rate η_k (already divided by ``loss_scale``).
        gamma: the exploration rate γ_k.
        reg: λ of the loss estimate.
        cumulative: Σ ŷ_s over all earlier epochs (d,).
        carry: whether q starts from ``cumulative`` instead of uniform.
        design_iters: Fedorov–Wynn steps for ν_k.
    """

    epoch: int
    length: int
    eta: float
    gamma: float
    reg: float
    cumulative: np.ndarray
    carry: bool
    design_iters: int


class BaseLearner(Protocol):
    """The base-learner hook (``ReductionBandit(base=factory)``): ``factory(surrogate, params)``
    returns an object with these two methods, created afresh each epoch."""

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """The direction θ_t (d,) whose greedy policy plays this round."""
        ...

    def update(self, action: np.ndarray, loss: float) -> np.ndarray | None:
        """Feedback of the round: the played action and its observed loss; returns the loss
        estimate ŷ_t (d,) (summed by the reduction into Ŷ) or None."""
        ...


class Exp2Net:
    """EXP2 with G-optimal exploration over the net of one epoch (see the module docstring)."""

    def __init__(self, surrogate: Surrogate, params: EpochParams) -> None:
        self.surrogate, self.params = surrogate, params
        self.design = g_optimal_design(surrogate.Phi, params.design_iters)
        start = params.cumulative if params.carry else np.zeros(surrogate.Phi.shape[1])
        self.scores = surrogate.Phi @ start  # Σ_s ⟨Φ_k[θ], ŷ_s⟩ per policy
        self._probs()

    def _probs(self) -> None:
        z = -self.params.eta * self.scores
        q = np.exp(z - z.max())
        self.q = q / q.sum()
        self.p = (1 - self.params.gamma) * self.q + self.params.gamma * self.design

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        cdf = np.cumsum(self.p)
        self.index = min(
            int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), self.p.size - 1
        )
        return self.surrogate.thetas[self.index]

    def update(self, action: np.ndarray, loss: float) -> np.ndarray:
        y_hat = loss_estimate(self.p, self.surrogate.C, action, loss, self.params.reg)
        self.scores += self.surrogate.Phi @ y_hat
        self._probs()
        return y_hat


def exp2_net(surrogate: Surrogate, params: EpochParams) -> Exp2Net:
    """The default base learner (``base="exp2_net"``), in the form of the ``base=`` hook."""
    return Exp2Net(surrogate, params)
