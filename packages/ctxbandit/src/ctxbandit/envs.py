"""Environments with stochastic action sets and oblivious adversarial losses, and the regret.

Protocol of the paper (Sec. 2): an oblivious adversary fixes y_1, …, y_T ∈ ℝ^d; each round the
context A_t is drawn i.i.d. from D, the learner plays a_t ∈ A_t and observes ⟨a_t, y_t⟩ (+ noise
here). The comparator is the best fixed policy π: A ↦ π(A) ∈ A, which is the greedy policy of
Y_T = Σ_t y_t, so the pseudo-regret is

    R_T = Σ_t ⟨a_t, y_t⟩ − ⟨g(Y_T), Y_T⟩,   g(θ) = E_{A∼D} argmin_{a∈A} ⟨a, θ⟩.

The paper has no experiments; both environments are this package's constructions.

Losses ("switching"): two base vectors u, v; the base changes every T/4 rounds (u, v, u, v) and
a slow sinusoidal drift of amplitude 0.15·scale with a random phase per coordinate is added, so no
single greedy action is best in every phase while a best fixed policy exists. ("stationary": u
plus the drift.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ctxbandit.oracles import Oracle
from paperkit import check_array, check_choice, check_int, check_real, param_error

__all__ = [
    "LOSSES",
    "CombinatorialAvailabilityEnv",
    "FiniteActionEnv",
    "g",
    "play",
    "pseudo_regret",
]

#: Loss sequences of the environments.
LOSSES = ("switching", "stationary")
#: Held-out contexts used to evaluate g by default.
N_EVAL = 20_000


def _loss_sequence(
    rng: np.random.Generator, T: int, base: tuple[np.ndarray, np.ndarray], scale: float, kind: str
) -> np.ndarray:
    u, v = base
    t = np.arange(T)
    phase = (4 * t) // T
    Y = np.where(((phase % 2 == 1) & (kind == "switching"))[:, None], v[None], u[None])
    shift = rng.uniform(0, 2 * np.pi, u.size)
    return Y + 0.15 * scale * np.sin(2 * np.pi * t[:, None] / T + shift[None])


class _Env:
    """Shared parts: the round index check, the noisy loss, the stored sequences."""

    oracle_kind = "topk"
    T: int
    d: int
    losses_: np.ndarray
    noise_: np.ndarray

    def _round(self, t: Any, owner: str) -> int:
        return check_int("t", owner, t, low=0, high=self.T - 1)

    def loss(self, t: int, action: np.ndarray) -> float:
        """ℓ_t = ⟨a, y_t⟩ + ε_t for an action of A_t (round t = 0, …, T−1). An action that is
        not in A_t, or has NaN, is refused (ValueError naming 'action')."""
        owner = f"{type(self).__name__}.loss"
        t = self._round(t, owner)
        a = check_array("action", owner, action, shape=(self.d,))
        if not Oracle(self.oracle_kind).contains(self.context(t), a):
            raise param_error(
                "action", owner, f"an action of the context A_t of round {t}", "another vector"
            )
        return float(a @ self.losses_[t] + self.noise_[t])

    def sample_contexts(self, n: int, seed: int | None = None) -> list[Any]:
        """n fresh contexts A ∼ D (independent of the T contexts of the run)."""
        raise NotImplementedError  # pragma: no cover - abstract


class CombinatorialAvailabilityEnv(_Env):
    """Combinatorial semi-bandit with stochastic availability (bandit feedback).

    Each of d items is available independently with probability ``p_avail`` (a context with fewer
    than k available items is drawn again); the actions are the {0,1}^d vectors with k available
    ones (K = C(n_avail, k)). Losses y_t ∈ [0, 1/k]^d (clipped), so ⟨a, y_t⟩ ∈ [0, 1]; observed
    loss ⟨a_t, y_t⟩ + N(0, noise²). A context is ``{"mask": (d,) bool, "k": k}``.

    NaN policy: hyper-parameters are checked (NaN refused); actions with NaN are refused.

    >>> env = CombinatorialAvailabilityEnv(d=5, k=2, T=8, seed=0)
    >>> env.context(0)["mask"].sum() >= 2, env.losses_.shape
    (np.True_, (8, 5))
    """

    oracle_kind = "topk"

    def __init__(
        self,
        d: int = 10,
        k: int = 3,
        p_avail: float = 0.6,
        T: int = 4000,
        loss: str = "switching",
        noise: float = 0.1,
        seed: int = 0,
    ) -> None:
        owner = "CombinatorialAvailabilityEnv"
        self.d = check_int("d", owner, d, low=1, high=10**4)
        self.k = check_int("k", owner, k, low=1, high=self.d)
        self.p_avail = check_real("p_avail", owner, p_avail, low=0, low_open=True, high=1)
        self.T = check_int("T", owner, T, low=1, high=10**7)
        self.loss_kind = check_choice("loss", owner, loss, LOSSES)
        self.noise = check_real("noise", owner, noise, low=0)
        self.seed = check_int("seed", owner, seed, low=0)
        rng = np.random.default_rng(seed)
        scale = 1.0 / self.k
        base = (rng.uniform(0, scale, self.d), rng.uniform(0, scale, self.d))
        self.losses_ = np.clip(_loss_sequence(rng, self.T, base, scale, self.loss_kind), 0, scale)
        self.noise_ = self.noise * rng.standard_normal(self.T)
        self.masks_ = self._masks(rng, self.T)

    def _masks(self, rng: np.random.Generator, n: int) -> np.ndarray:
        masks = rng.random((n, self.d)) < self.p_avail
        bad = masks.sum(axis=1) < self.k
        while bad.any():  # resample contexts with fewer than k available items
            masks[bad] = rng.random((int(bad.sum()), self.d)) < self.p_avail
            bad = masks.sum(axis=1) < self.k
        return masks

    def context(self, t: int) -> dict:
        """A_t as ``{"mask": (d,) bool, "k": k}`` (round t = 0, …, T−1)."""
        t = self._round(t, "CombinatorialAvailabilityEnv.context")
        return {"mask": self.masks_[t].copy(), "k": self.k}

    def sample_contexts(self, n: int, seed: int | None = None) -> list[dict]:
        n = check_int("n", "CombinatorialAvailabilityEnv.sample_contexts", n, low=1, high=10**7)
        rng = np.random.default_rng([self.seed, 1] if seed is None else seed)
        return [{"mask": m, "k": self.k} for m in self._masks(rng, n)]


class FiniteActionEnv(_Env):
    """Explicit finite action sets: each context is a ``(K, d)`` array of actions.

    D is uniform over ``action_sets`` when given, else over ``n_sets`` sets drawn once from the
    seed, else each round draws a fresh set (``n_sets=None``). Drawn actions are uniform on the
    unit sphere, and losses have ‖y_t‖ ≤ 1, so |⟨a, y_t⟩| ≤ 1.

    NaN policy: hyper-parameters and action sets are checked (NaN refused).

    >>> env = FiniteActionEnv(d=3, K=4, T=10, n_sets=2, seed=0)
    >>> env.context(0).shape, len(env.support_)
    ((4, 3), 2)
    """

    oracle_kind = "finite"

    def __init__(
        self,
        d: int = 5,
        K: int = 10,
        T: int = 1000,
        n_sets: int | None = None,
        loss: str = "switching",
        noise: float = 0.1,
        seed: int = 0,
        action_sets: Sequence[np.ndarray] | None = None,
    ) -> None:
        owner = "FiniteActionEnv"
        self.d = check_int("d", owner, d, low=1, high=10**4)
        self.K = check_int("K", owner, K, low=1, high=10**5)
        self.T = check_int("T", owner, T, low=1, high=10**7)
        if n_sets is not None:
            n_sets = check_int("n_sets", owner, n_sets, low=1, high=10**5)
        self.loss_kind = check_choice("loss", owner, loss, LOSSES)
        self.noise = check_real("noise", owner, noise, low=0)
        self.seed = check_int("seed", owner, seed, low=0)
        rng = np.random.default_rng(seed)
        if action_sets is not None:
            if isinstance(action_sets, np.ndarray) or not len(action_sets):
                raise param_error(
                    "action_sets",
                    owner,
                    "a non-empty list of (K_i, d) arrays",
                    type(action_sets).__name__,
                    cls=TypeError,
                )
            self.support_ = [
                np.asarray(check_array("action_sets", owner, A, shape=(None, self.d)), float)
                for A in action_sets
            ]
        elif n_sets is not None:
            self.support_ = [self._draw(rng) for _ in range(n_sets)]
        else:
            self.support_ = None
        u, v = rng.standard_normal(self.d), rng.standard_normal(self.d)
        base = (0.8 * u / np.linalg.norm(u), 0.8 * v / np.linalg.norm(v))
        Y = _loss_sequence(rng, self.T, base, 1.0, self.loss_kind)
        self.losses_ = Y / np.maximum(1.0, np.linalg.norm(Y, axis=1, keepdims=True))
        self.noise_ = self.noise * rng.standard_normal(self.T)
        self._contexts = self._sample(rng, self.T)

    def _draw(self, rng: np.random.Generator) -> np.ndarray:
        A = rng.standard_normal((self.K, self.d))
        return A / np.linalg.norm(A, axis=1, keepdims=True)

    def _sample(self, rng: np.random.Generator, n: int) -> list[np.ndarray]:
        if self.support_ is None:
            return [self._draw(rng) for _ in range(n)]
        return [self.support_[i] for i in rng.integers(len(self.support_), size=n)]

    def context(self, t: int) -> np.ndarray:
        """A_t, a ``(K_t, d)`` array (round t = 0, …, T−1)."""
        return self._contexts[self._round(t, "FiniteActionEnv.context")].copy()

    def sample_contexts(self, n: int, seed: int | None = None) -> list[np.ndarray]:
        n = check_int("n", "FiniteActionEnv.sample_contexts", n, low=1, high=10**7)
        return self._sample(np.random.default_rng([self.seed, 1] if seed is None else seed), n)


def g(
    env: _Env, theta: np.ndarray, n_contexts: int = N_EVAL, seed: int | None = None
) -> np.ndarray:
    """g(θ) = E_{A∼D} Oracle(A, θ): exact when D has a finite support (``support_``), else the
    mean over ``n_contexts`` held-out contexts. NaN in ``theta`` refused.

    >>> env = FiniteActionEnv(d=2, T=4, action_sets=[np.eye(2), -np.eye(2)])
    >>> g(env, np.array([1.0, 2.0]))
    array([ 0.5, -0.5])
    """
    if not isinstance(env, _Env):
        raise param_error("env", "g", "a ctxbandit environment", type(env).__name__, cls=TypeError)
    theta = check_array("theta", "g", theta, shape=(env.d,))
    n_contexts = check_int("n_contexts", "g", n_contexts, low=1, high=10**7)
    support = getattr(env, "support_", None)
    contexts = support if support is not None else env.sample_contexts(n_contexts, seed)
    return Oracle(env.oracle_kind).batch(contexts, np.asarray(theta, float)[None])[0].mean(axis=0)


def pseudo_regret(
    env: _Env, actions: np.ndarray, n_contexts: int = N_EVAL, seed: int | None = None
) -> float:
    """R_T = Σ_t ⟨a_t, y_t⟩ − ⟨g(Y_T), Y_T⟩ for the played actions (T, d), against the best
    policy (the greedy policy of Y_T; g as in :func:`g`). NaN in ``actions`` refused.

    >>> env = FiniteActionEnv(d=2, T=2, noise=0.0, action_sets=[np.eye(2)])
    >>> acts = np.array([g(env, env.losses_.sum(0))] * 2)
    >>> abs(pseudo_regret(env, acts)) < 1e-12
    True
    """
    if not isinstance(env, _Env):
        raise param_error(
            "env", "pseudo_regret", "a ctxbandit environment", type(env).__name__, cls=TypeError
        )
    actions = check_array("actions", "pseudo_regret", actions, shape=(env.T, env.d))
    Y = env.losses_.sum(axis=0)
    best = g(env, Y, n_contexts, seed) @ Y
    return float(np.einsum("td,td->", actions, env.losses_) - best)


def play(env: _Env, learner: Any) -> Any:
    """Run ``learner`` for the T rounds of ``env`` (act, observe, update); return it. A learner
    with ``full_information = True`` also receives y_t (``update(loss, y=y_t)``)."""
    if not isinstance(env, _Env):
        raise param_error(
            "env", "play", "a ctxbandit environment", type(env).__name__, cls=TypeError
        )
    if not (hasattr(learner, "act") and hasattr(learner, "update")):
        raise param_error(
            "learner",
            "play",
            "a learner with act and update",
            type(learner).__name__,
            cls=TypeError,
        )
    full = getattr(learner, "full_information", False)
    for t in range(env.T):
        action = learner.act(env.context(t))
        loss = env.loss(t, action)
        if full:
            learner.update(loss, y=env.losses_[t])
        else:
            learner.update(loss)
    return learner
