"""Baselines of the reproduction: EXP4 over the same policy net (pays √K), LinUCB (assumes
stochastic losses), uniform play, and full-information Hedge over the net (a lower reference).

None of them is the paper's method; they are the standard comparisons for adversarial
contextual bandits (EXP4: Auer et al. 2002; LinUCB: Li et al. 2010; Hedge: Freund & Schapire
1997).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ctxbandit.exp2 import policy_net
from ctxbandit.learner import Learner
from paperkit import check_array, check_int, check_real, param_error

__all__ = ["Exp4Baseline", "FullInfoHedge", "LinUCBBaseline", "UniformPolicy"]


def _enumerable(oracle: Any, owner: str) -> None:
    if oracle.kind not in ("topk", "finite"):
        raise param_error(
            "oracle", owner, "'topk' or 'finite' (it enumerates A_t)", "a callable", cls=TypeError
        )


def _sample(p: np.ndarray, rng: np.random.Generator) -> int:
    cdf = np.cumsum(p)
    return min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), p.size - 1)


class _NetLearner(Learner):
    """A learner with exponential weights over the net Θ (±e_i and random unit vectors) and a
    learning rate √(2 log M / (T·units)) unless ``eta`` is given."""

    def __init__(self, d, oracle, n_policies, horizon, eta, random_state, loss_scale) -> None:
        super().__init__(d, oracle, random_state, loss_scale)
        owner = type(self).__name__
        self.n_policies = check_int("n_policies", owner, n_policies, low=2 * self.d, high=10**5)
        self.horizon = check_int("horizon", owner, horizon, low=1, high=10**8)
        self.eta = None if eta is None else check_real("eta", owner, eta, low=0, low_open=True)
        self.thetas_ = policy_net(self.d, self.n_policies, self.rng)
        self.scores_ = np.zeros(self.n_policies)

    def _rate(self, units: float) -> float:
        eta = (
            self.eta
            if self.eta is not None
            else math.sqrt(2 * math.log(self.n_policies) / (self.horizon * units))
        )
        return eta / self.loss_scale

    def _weights(self, eta: float) -> np.ndarray:
        z = -eta * self.scores_
        w = np.exp(z - z.max())
        return w / w.sum()


class Exp4Baseline(_NetLearner):
    """EXP4 (with uniform exploration over A_t) over the net of ``ReductionBandit``.

    Each round every policy θ recommends Oracle(A_t, θ) (M oracle calls); the action law is
    P(a) = (1 − γ) Σ_{θ: π_θ(A_t) = a} w(θ) + γ/K_t, so the K_t actions of A_t are enumerated.
    The importance-weighted loss ℓ_t 1[π_θ(A_t) = a_t]/P(a_t) updates every policy that
    recommended the played action. Defaults η = √(2 log M/(T K)), γ = min(½, K η): the regret
    is O(√(T K log M)), growing with K.

    NaN policy: NaN/inf contexts and losses are refused (ValueError).
    """

    def __init__(
        self,
        d: int,
        oracle: str | Callable = "topk",
        n_policies: int = 256,
        horizon: int = 1000,
        eta: float | None = None,
        gamma: float | None = None,
        random_state: int | None = 0,
        loss_scale: float = 1.0,
    ) -> None:
        super().__init__(d, oracle, n_policies, horizon, eta, random_state, loss_scale)
        _enumerable(self.oracle, "Exp4Baseline")
        if self.oracle.kind == "topk" and self.d > 52:
            raise param_error("d", "Exp4Baseline", "at most 52 with 'topk'", self.d)
        self.gamma = (
            None if gamma is None else check_real("gamma", "Exp4Baseline", gamma, low=0, high=1)
        )

    def _act(self, context: Any) -> np.ndarray:
        actions = self.oracle.actions(context)  # (K, d): EXP4 needs the whole set
        K = actions.shape[0]
        eta = self._rate(K)
        gamma = self.gamma
        if gamma is None:
            gamma = min(0.5, math.sqrt(2 * K * math.log(self.n_policies) / self.horizon))
        match = self._recommendations(context, actions)
        P = gamma / K + (1 - gamma) * np.bincount(match, self._weights(eta), minlength=K)
        i = _sample(P, self.rng)
        self._state = (eta, match == i, P[i])
        return actions[i]

    def _recommendations(self, context: Any, actions: np.ndarray) -> np.ndarray:
        """Index in ``actions`` of every policy's recommendation (M oracle calls)."""
        if self.oracle.kind == "finite":
            self.oracle.n_calls += self.n_policies
            return np.argmin(self.thetas_ @ actions.T, axis=1)
        recs = self.oracle.batch([context], self.thetas_)[:, 0]
        code = 2.0 ** np.arange(self.d)  # a {0,1}^d action as an exact integer (d <= 52)
        keys = actions @ code
        order = np.argsort(keys)
        return order[np.searchsorted(keys[order], recs @ code)]

    def _update(self, context: Any, action: np.ndarray, loss: float) -> None:
        _, hit, prob = self._state
        self.scores_[hit] += loss / prob


class FullInfoHedge(_NetLearner):
    """Hedge over the net with full information: after each round it sees y_t and charges every
    policy its loss ⟨Oracle(A_t, θ), y_t⟩ (M oracle calls per round); η = √(8 log M / T).
    Not a bandit algorithm: a lower reference for what the net can achieve.

    NaN policy: NaN/inf contexts, losses and y are refused (ValueError).
    """

    full_information = True

    def __init__(
        self,
        d: int,
        oracle: str | Callable = "topk",
        n_policies: int = 256,
        horizon: int = 1000,
        eta: float | None = None,
        random_state: int | None = 0,
        loss_scale: float = 1.0,
    ) -> None:
        super().__init__(d, oracle, n_policies, horizon, eta, random_state, loss_scale)

    def _act(self, context: Any) -> np.ndarray:
        self._recs = self.oracle.batch([context], self.thetas_)[:, 0]
        return self._recs[_sample(self._weights(self._rate(0.25)), self.rng)]

    def update(self, loss: float, y: np.ndarray | None = None) -> None:
        """Feedback: the observed loss and the full loss vector ``y`` (d,) (required)."""
        if y is None:
            raise param_error(
                "y", "FullInfoHedge.update", "the loss vector y_t (d,)", None, cls=TypeError
            )
        self._y = check_array("y", "FullInfoHedge.update", y, shape=(self.d,))
        super().update(loss)

    def _update(self, context: Any, action: np.ndarray, loss: float) -> None:
        self.scores_ += self._recs @ self._y


class LinUCBBaseline(Learner):
    """LinUCB for losses (Li et al. 2010; stochastic-loss assumption): ridge estimate
    ŷ = V⁻¹ Σ a_s ℓ_s with V = reg·I + Σ a_s a_sᵀ, plays argmin_{a ∈ A_t} ⟨a, ŷ⟩ − α‖a‖_{V⁻¹}
    over the enumerated actions. Under switching losses it locks onto the current phase.

    NaN policy: NaN/inf contexts and losses are refused (ValueError).
    """

    def __init__(
        self,
        d: int,
        oracle: str | Callable = "topk",
        alpha: float = 1.0,
        reg: float = 1.0,
        random_state: int | None = 0,
        loss_scale: float = 1.0,
    ) -> None:
        super().__init__(d, oracle, random_state, loss_scale)
        _enumerable(self.oracle, "LinUCBBaseline")
        self.alpha = check_real("alpha", "LinUCBBaseline", alpha, low=0)
        reg = check_real("reg", "LinUCBBaseline", reg, low=0, low_open=True)
        self.V = reg * np.eye(self.d)
        self.b = np.zeros(self.d)

    def _act(self, context: Any) -> np.ndarray:
        actions = self.oracle.actions(context)
        Vinv = np.linalg.inv(self.V)
        width = np.sqrt(np.einsum("kd,de,ke->k", actions, Vinv, actions))
        index = actions @ (Vinv @ self.b) - self.alpha * self.loss_scale * width
        return actions[int(np.argmin(index))]

    def _update(self, context: Any, action: np.ndarray, loss: float) -> None:
        self.V += np.outer(action, action)
        self.b += action * loss


class UniformPolicy(Learner):
    """Uniform play over A_t: k uniform available items (``"topk"``), a uniform row
    (``"finite"``), or Oracle(A_t, θ) for a uniform random direction θ (callable oracles).

    NaN policy: NaN/inf contexts and losses are refused (ValueError).
    """

    def __init__(self, d: int, oracle: str | Callable = "topk", random_state: int | None = 0):
        super().__init__(d, oracle, random_state)

    def _act(self, context: Any) -> np.ndarray:
        if self.oracle.kind == "topk":
            items = self.rng.choice(np.flatnonzero(context["mask"]), context["k"], replace=False)
            a = np.zeros(self.d)
            a[items] = 1.0
            return a
        if self.oracle.kind == "finite":
            return np.asarray(context, dtype=float)[self.rng.integers(len(context))]
        return self.oracle(context, self.rng.standard_normal(self.d))

    def _update(self, context: Any, action: np.ndarray, loss: float) -> None:
        pass
