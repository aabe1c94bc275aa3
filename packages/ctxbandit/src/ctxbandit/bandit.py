"""ReductionBandit: adversarial linear contextual bandits by reduction to a linear bandit over
the estimated set of mean actions (van Erven, Mayo, Olkhovskaya, Wei, NeurIPS 2025, Sec. 3).

A policy π's expected loss is linear in its mean action φ(π) = E_{A∼D}[π(A)], so the contextual
problem is a linear bandit over Ω = {φ(π)} = E[conv A]; the best policy for a loss vector θ is the
greedy π_θ(A) = Oracle(A, θ). Ω is unknown and estimated per epoch from the contexts seen so far:

- doubling epochs: epoch k covers rounds [2^{k−1}, 2^k); the surrogate Ω̂_k (through ĝ_k) is
  built once at its start from the contexts of earlier epochs only (at most ``max_contexts``,
  subsampled without replacement), and frozen for the epoch;
- a base linear-bandit learner on Ω̂_k picks a direction θ_t; the round plays the greedy action
  a_t = Oracle(A_t, θ_t) on the *real* context;
- epoch 1 (t = 1) plays Oracle(A_1, θ) for a random unit θ.

Default base learner (``base="exp2_net"``, :class:`ctxbandit.exp2.Exp2Net`): EXP2 over a net
Θ_k of M directions (±e_i, random unit vectors drawn once, and Ŷ/‖Ŷ‖ with Ŷ = Σ ŷ_s the
cumulative loss estimate), with

    η°_k = √(log M / (3 d T_k)),  η_k = eta_scale · η°_k / loss_scale,  γ_k = min(½, d η°_k),

T_k = 2^{k−1}. ``eta_scale = 10`` is a tuned constant, not the theory's (γ_k ≥ d η_k no longer
holds); ``eta_scale = 1`` is the worst-case rate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ctxbandit.exp2 import EpochParams, Surrogate, build_surrogate, exp2_net, policy_net
from ctxbandit.learner import Learner
from paperkit import check_bool, check_choice, check_int, check_real, param_error

__all__ = ["BASES", "ReductionBandit"]

#: The built-in base learners.
BASES = {"exp2_net": exp2_net}


class ReductionBandit(Learner):
    """The reduction algorithm (paper, Sec. 3) with an implementable base learner.

    Args:
        d: dimension of actions and losses.
        oracle: ``"topk"``, ``"finite"`` or a callable ``oracle(context, theta) -> (d,)``.
        n_policies: M, the size of the policy net (≥ 2d + 2; default 256).
        base: ``"exp2_net"`` or a factory ``base(surrogate, params) -> learner`` with
            ``sample(rng) -> theta`` and ``update(action, loss) -> y_hat | None``
            (:class:`ctxbandit.exp2.BaseLearner`), called at the start of every epoch.
        eta: a fixed learning rate (None: eta_scale·η°_k per epoch). Divided by ``loss_scale``.
        gamma: a fixed exploration rate in [0, 1] (None: min(½, d η°_k)).
        reg: λ of Σ̂_t (None: 1/horizon, or 1/2^k in epoch k when no horizon is given).
        eta_scale: c_η, the multiple of the theory rate η°_k (default 10, tuned).
        loss_scale: a bound on |⟨a, y⟩|; η is divided by it, so scaling all losses and
            ``loss_scale`` together leaves every decision unchanged.
        carry: start each epoch's q from all past estimates instead of uniform.
        random_state: seed of the learner's randomness (None: fresh entropy).
        horizon: T when known (sets the default λ = 1/T).
        max_contexts: cap on |B_k| (subsampled; default 2000).
        design_iters: Fedorov–Wynn steps of the G-optimal design (default 200).

    Diagnostics: ``epoch_``, ``policy_probs_`` (p_t), ``surrogate_`` (Φ_k, C_k, Θ_k),
    ``cumulative_estimate_`` (Ŷ), ``n_oracle_calls_``, ``history_actions_``.

    NaN policy: NaN/inf in contexts, losses or hyper-parameters are refused (ValueError).

    >>> from ctxbandit.envs import CombinatorialAvailabilityEnv, play
    >>> env = CombinatorialAvailabilityEnv(d=6, k=2, T=64, seed=0)
    >>> alg = play(env, ReductionBandit(d=6, oracle="topk", n_policies=32, random_state=0))
    >>> alg.history_actions_.shape, alg.epoch_
    ((64, 6), 7)
    """

    def __init__(
        self,
        d: int,
        oracle: str | Callable = "topk",
        n_policies: int = 256,
        base: str | Callable = "exp2_net",
        eta: float | None = None,
        gamma: float | None = None,
        reg: float | None = None,
        eta_scale: float = 10.0,
        loss_scale: float = 1.0,
        carry: bool = False,
        random_state: int | None = 0,
        *,
        horizon: int | None = None,
        max_contexts: int = 2000,
        design_iters: int = 200,
    ) -> None:
        super().__init__(d, oracle, random_state, loss_scale)
        owner = "ReductionBandit"
        d = self.d
        self.n_policies = check_int("n_policies", owner, n_policies, low=2 * d + 2, high=10**5)
        if callable(base):
            self.base = base
        else:
            self.base = BASES[check_choice("base", owner, base, tuple(BASES))]
        self.eta = None if eta is None else check_real("eta", owner, eta, low=0, low_open=True)
        self.gamma = None if gamma is None else check_real("gamma", owner, gamma, low=0, high=1)
        self.reg = None if reg is None else check_real("reg", owner, reg, low=0)
        self.eta_scale = check_real("eta_scale", owner, eta_scale, low=0, low_open=True)
        self.carry = check_bool("carry", owner, carry)
        self.horizon = None if horizon is None else check_int("horizon", owner, horizon, low=1)
        self.max_contexts = check_int("max_contexts", owner, max_contexts, low=1, high=10**7)
        self.design_iters = check_int("design_iters", owner, design_iters, low=0, high=10**6)
        self.thetas_ = policy_net(d, self.n_policies, self.rng)
        self.cumulative_estimate_ = np.zeros(d)
        self.epoch_ = 0
        self.surrogate_: Surrogate | None = None
        self._learner: Any = None
        self._contexts: list[Any] = []

    @property
    def policy_probs_(self) -> np.ndarray | None:
        """p_t over the net in the current epoch (None in epoch 1 or for a custom base)."""
        return getattr(self._learner, "p", None)

    def epoch_params(self, k: int) -> EpochParams:
        """η_k, γ_k, λ and the rest for epoch k ≥ 2 (see the module docstring)."""
        length = 2 ** (k - 1)
        eta0 = math.sqrt(math.log(self.n_policies) / (3 * self.d * length))
        eta = self.eta if self.eta is not None else self.eta_scale * eta0
        gamma = self.gamma if self.gamma is not None else min(0.5, self.d * eta0)
        if self.reg is not None:
            reg = self.reg
        else:
            reg = 1.0 / (self.horizon if self.horizon is not None else 2**k)
        return EpochParams(
            epoch=k,
            length=length,
            eta=eta / self.loss_scale,
            gamma=gamma,
            reg=reg,
            cumulative=self.cumulative_estimate_.copy(),
            carry=self.carry,
            design_iters=self.design_iters,
        )

    def _start_epoch(self) -> None:
        k = self.epoch_
        stored = self._contexts
        if len(stored) > self.max_contexts:
            keep = np.sort(self.rng.choice(len(stored), self.max_contexts, replace=False))
            stored = [stored[i] for i in keep]
        norm = np.linalg.norm(self.cumulative_estimate_)
        if norm > 0:  # the empirical best policy's direction Ŷ/‖Ŷ‖
            self.thetas_[-1] = self.cumulative_estimate_ / norm
        self.surrogate_ = build_surrogate(self.oracle, stored, self.thetas_.copy())
        self._learner = self.base(self.surrogate_, self.epoch_params(k))

    def _act(self, context: Any) -> np.ndarray:
        t = self.t_ + 1
        if t & (t - 1) == 0:  # t = 2^{k-1}: epoch k starts
            self.epoch_ = t.bit_length()
            if self.epoch_ >= 2:
                self._start_epoch()
        if self.epoch_ == 1:
            theta = self.rng.standard_normal(self.d)
            theta /= np.linalg.norm(theta)
        else:
            theta = np.asarray(self._learner.sample(self.rng), dtype=float)
            if theta.shape != (self.d,):
                raise param_error(
                    "base",
                    "ReductionBandit",
                    f"a learner sampling shape ({self.d},)",
                    f"shape {theta.shape}",
                )
        return self.oracle(context, theta)

    def _update(self, context: Any, action: np.ndarray, loss: float) -> None:
        if self.epoch_ >= 2:
            y_hat = self._learner.update(action, loss)
            if y_hat is not None:
                self.cumulative_estimate_ += y_hat
        self._contexts.append(self.oracle.freeze(context))
