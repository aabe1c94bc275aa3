"""The machinery shared by CUCB, AROQ and SROQ: checked oracle calls and the optimistic indices.

Indices (Section 2 and 4 of the paper; :math:`N_i` observations of arm ``i``, horizon ``T``):

- plain (``covariance=False``): :math:`\\mathrm{UCB}_i = \\hat\\mu_i + \\sqrt{1.5 \\log T / N_i}`
  (the CUCB constant), and :math:`1 + \\sqrt{1.5 \\log T}` while :math:`N_i = 0`;
  :math:`\\mathrm{UCB}(A) = \\sum_{i \\in A} \\mathrm{UCB}_i`, :math:`\\mathrm{LCB}(A) =
  \\sum_{i \\in A} (\\hat\\mu_i - w_i)` with :math:`w_i` the width;
- covariance-adaptive (``covariance=True``): :math:`\\hat\\mu(A) \\pm \\beta \\sqrt{x_A^\\top
  \\hat C x_A}` with :math:`\\hat C_{ij} = \\hat\\Sigma_{ij} N_{ij} / (N_i N_j)` and
  :math:`\\beta = \\sqrt{2 \\log T}` (an arm never observed counts as :math:`\\hat\\mu_i = 1`,
  :math:`\\hat C_{ii} = 1/4`). A linear oracle cannot maximize this index, so it is maximized
  either exactly over an enumerated action set (``oracle_kind="enumerate"``) or through the
  linear oracle on a Gaussian perturbation
  :math:`\\tilde\\theta \\sim N(\\hat\\mu, \\beta^2 \\hat C)` (``oracle_kind="perturb"``).

Non-linear monotone rewards ``reward(mask, w)`` use the oracle on
:math:`\\mathrm{clip}(\\mathrm{UCB}, 0, 1)` (the user's oracle maximizes ``reward(., w)``).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from oraclebandit.stats import WORST_VARIANCE, SemiBanditStats
from paperkit import (
    check_array,
    check_bool,
    check_callable,
    check_choice,
    check_int,
    describe,
    param_error,
)

__all__ = ["ORACLE_KINDS", "SemiBanditAlgorithm"]

ORACLE_KINDS = ("linear", "enumerate", "perturb")
#: The exploration constant of CUCB's confidence width.
CUCB_CONSTANT = 1.5
#: The most actions the exact index maximization enumerates.
MAX_ACTIONS = 5000


def _check_oracle(oracle: Any, d: int, owner: str) -> Any:
    expected = "a callable taking one argument w (d,) and returning a bool mask (d,)"
    if not callable(oracle):
        raise param_error("oracle", owner, expected, describe(oracle), cls=TypeError)
    try:
        signature = inspect.signature(oracle)
    except (TypeError, ValueError):  # builtins without a signature: trusted
        signature = None
    if signature is not None:
        try:
            signature.bind(np.zeros(d))
        except TypeError:
            raise param_error(
                "oracle", owner, expected, f"a callable with signature {signature}", cls=TypeError
            ) from None
    size = getattr(oracle, "d", d)
    if size != d:
        raise param_error("oracle", owner, f"an oracle over d = {d} arms", f"one over {size}")
    return oracle


class SemiBanditAlgorithm:
    """Base class: ``select()`` the action of the next round, ``update(mask, x)`` with its draw.

    Args:
        d: number of base arms.
        m: the largest action size.
        T: the horizon (known; it sets the confidence level and the grids), ``>= 2``.
        oracle: ``w (d,) -> bool mask (d,)``, the exact maximizer of :math:`r(\\cdot, w)` over the
            feasible actions (its ``feasible(mask)``, when present, is checked on every answer).
        covariance: the covariance-adaptive index instead of the plain CUCB index.
        oracle_kind: ``"linear"`` (the oracle on the index; plain only), ``"enumerate"`` (exact
            maximization over ``actions``) or ``"perturb"`` (the oracle on a Gaussian
            perturbation; covariance only). Default: ``"perturb"`` when ``covariance`` else
            ``"linear"``.
        actions: the feasible actions (K, d) bool for ``"enumerate"`` (default:
            ``oracle.actions()``), at most 5000.
        reward: a monotone reward ``reward(mask, w) -> float``; None is the linear reward.
        random_state: seed of the perturbations (an int >= 0 or None).

    Diagnostics after a run: ``n_queries_`` (index maximizations: oracle calls, or exact
    maximizations over ``actions``), ``n_adaptive_rounds_`` (times the played policy was
    recomputed from new data), ``epoch_log_`` (one dict per adaptive round).
    """

    def __init__(
        self,
        d: int,
        m: int,
        T: int,
        oracle: Callable[[np.ndarray], np.ndarray],
        *,
        covariance: bool = False,
        oracle_kind: str | None = None,
        actions: np.ndarray | None = None,
        reward: Callable[[np.ndarray, np.ndarray], float] | None = None,
        random_state: int | None = None,
    ) -> None:
        owner = type(self).__name__
        self.d = check_int("d", owner, d, low=1)
        self.m = check_int("m", owner, m, low=1, high=self.d)
        self.T = check_int("T", owner, T, low=2)
        self.oracle = _check_oracle(oracle, self.d, owner)
        self.covariance = check_bool("covariance", owner, covariance)
        kind = oracle_kind if oracle_kind is not None else ("perturb" if covariance else "linear")
        self.oracle_kind = check_choice("oracle_kind", owner, kind, ORACLE_KINDS)
        if self.covariance and kind == "linear":
            raise param_error(
                "oracle_kind", owner, "'enumerate' or 'perturb' when covariance=True", kind
            )
        if not self.covariance and kind == "perturb":
            raise param_error(
                "oracle_kind", owner, "'linear' or 'enumerate' without covariance", kind
            )
        self.reward = check_callable("reward", owner, reward, optional=True)
        if self.reward is not None and self.covariance:
            raise param_error("reward", owner, "None when covariance=True", describe(reward))
        if actions is None and kind == "enumerate":
            if not hasattr(oracle, "actions"):
                raise param_error("actions", owner, "given when the oracle has no actions()", None)
            actions = oracle.actions()
        self.actions = None
        if actions is not None:
            self.actions = check_array("actions", owner, actions, shape=(None, self.d), kind="bool")
            if len(self.actions) > MAX_ACTIONS:
                raise param_error("actions", owner, f"at most {MAX_ACTIONS} actions", len(actions))
            if (self.actions.sum(axis=1) > self.m).any():
                raise param_error("actions", owner, f"actions of at most m = {self.m} arms", "more")
        self.random_state = (
            None if random_state is None else check_int("random_state", owner, random_state, low=0)
        )
        self._log_T = math.log(self.T)
        self.reset()

    # ----------------------------------------------------------------- the round interface
    def reset(self) -> None:
        """Forget every observation; the first query happens at the next ``select()``."""
        self.stats = SemiBanditStats(self.d, self.covariance)
        self.rng = np.random.default_rng(self.random_state)
        self.n_queries_ = 0
        self.n_adaptive_rounds_ = 0
        self.epoch_log_: list[dict[str, Any]] = []
        self.t = 0
        self._mask: np.ndarray | None = None
        self._idx = np.zeros(0, dtype=np.int64)

    def select(self) -> np.ndarray:
        """The action of round ``t + 1`` (a bool mask owned by the algorithm: do not modify)."""
        if self.t >= self.T:
            raise param_error("T", f"{type(self).__name__}.select", f"> {self.t} rounds", self.T)
        if self._mask is None:
            self._start()
        return self._mask

    def update(self, mask: np.ndarray, x: np.ndarray) -> None:
        """Observe the draw ``x`` (d,) on the played ``mask`` (entries outside it are ignored).

        When ``mask`` is the array ``select()`` returned (the fast path of :func:`run`), nothing
        is checked; otherwise both are checked (NaN refused)."""
        if self._mask is None:
            self._start()
        if mask is self._mask:
            idx = self._idx
        else:
            owner = f"{type(self).__name__}.update"
            mask = check_array("mask", owner, mask, shape=(self.d,), kind="bool")
            x = check_array("x", owner, x, shape=(self.d,))
            idx = np.flatnonzero(mask)
        self.stats.update(idx, x[idx])
        self.t += 1
        if self.t < self.T:
            self._observed(idx)

    def _start(self) -> None:
        raise NotImplementedError

    def _observed(self, idx: np.ndarray) -> None:
        raise NotImplementedError

    def _play(self, mask: np.ndarray, reason: str) -> None:
        """Play ``mask`` from the next round on: one adaptive round."""
        self._mask, self._idx = mask, np.flatnonzero(mask)
        self.n_adaptive_rounds_ += 1
        self.epoch_log_.append({"round": self.t + 1, "queries": self.n_queries_, "why": reason})

    # ----------------------------------------------------------------- the indices
    def _widths(self) -> tuple[np.ndarray, np.ndarray]:
        """(:math:`\\hat\\mu`, CUCB widths); an unobserved arm has mean 0 and width
        :math:`1 + \\sqrt{1.5 \\log T}`."""
        n = self.stats.counts
        safe = np.maximum(n, 1)
        width = np.sqrt(CUCB_CONSTANT * self._log_T / safe)
        width[n == 0] = 1.0 + math.sqrt(CUCB_CONSTANT * self._log_T)
        return self.stats.sums / safe, width

    def _ucb(self) -> np.ndarray:
        mean, width = self._widths()
        ucb = mean + width
        return np.clip(ucb, 0.0, 1.0) if self.reward is not None else ucb

    def _cov_parts(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(:math:`\\hat\\mu` with 1 for unobserved arms, :math:`\\hat C`, :math:`\\beta`)."""
        n = self.stats.counts
        safe = np.maximum(n, 1).astype(float)
        C = self.stats.covariance_matrix() * self.stats.pair_counts / np.outer(safe, safe)
        unseen = n == 0
        C[unseen, unseen] = WORST_VARIANCE
        mean = self.stats.means
        mean[unseen] = 1.0
        return mean, C, math.sqrt(2.0 * self._log_T)

    def _value(self, mask: np.ndarray, w: np.ndarray) -> float:
        if self.reward is None:
            return float(w[mask].sum())
        return float(self.reward(mask, np.clip(w, 0.0, 1.0)))

    def _bounds(self, mask: np.ndarray) -> tuple[float, float]:
        """(UCB(A), LCB(A)) of one action under the algorithm's index."""
        if self.covariance:
            mean, C, beta = self._cov_parts()
            x = mask.astype(float)
            radius = beta * math.sqrt(max(float(x @ C @ x), 0.0))
            return float(mean[mask].sum()) + radius, float(mean[mask].sum()) - radius
        mean, width = self._widths()
        return self._value(mask, mean + width), self._value(mask, mean - width)

    def _scores(self) -> np.ndarray:
        """``"enumerate"``: the index of every action of ``self.actions``."""
        A = self.actions
        if self.covariance:
            mean, C, beta = self._cov_parts()
            Af = A.astype(float)
            quad = np.einsum("kd,de,ke->k", Af, C, Af)
            return Af @ mean + beta * np.sqrt(np.maximum(quad, 0.0))
        ucb = self._ucb()
        if self.reward is None:
            return A.astype(float) @ ucb
        return np.array([self.reward(a, ucb) for a in A])

    def _perturbed(self) -> np.ndarray:
        """``"perturb"``: one draw :math:`\\tilde\\theta \\sim N(\\hat\\mu, \\beta^2 \\hat C)`
        (:math:`\\hat C` projected onto the PSD cone)."""
        mean, C, beta = self._cov_parts()
        vals, vecs = np.linalg.eigh((C + C.T) / 2)
        root = vecs * np.sqrt(np.maximum(vals, 0.0))
        return mean + beta * root @ self.rng.standard_normal(self.d)

    def _index(self) -> np.ndarray:
        """The object one batch of queries maximizes: per-action scores (``"enumerate"``) or
        per-arm weights for the oracle (``"linear"``: UCB, ``"perturb"``: a fresh draw)."""
        if self.oracle_kind == "enumerate":
            return self._scores()
        return self._perturbed() if self.oracle_kind == "perturb" else self._ucb()

    def _maximize(self, index: np.ndarray, bonus: np.ndarray | None = None) -> np.ndarray:
        """One query: the action maximizing ``index`` (+ ``bonus`` per arm)."""
        if self.oracle_kind == "enumerate":
            self.n_queries_ += 1
            scores = index if bonus is None else index + self.actions.astype(float) @ bonus
            return self.actions[int(np.argmax(scores))].copy()
        return self._call_oracle(index if bonus is None else index + bonus)

    def _greedy(self) -> np.ndarray:
        """One query: :math:`\\arg\\max_A r(A, \\hat\\mu)`."""
        mean = self.stats.means
        if self.oracle_kind == "enumerate":
            self.n_queries_ += 1
            return self.actions[int(np.argmax([self._value(a, mean) for a in self.actions]))].copy()
        return self._call_oracle(mean)

    def _call_oracle(self, w: np.ndarray) -> np.ndarray:
        owner = type(self).__name__
        self.n_queries_ += 1
        mask = np.asarray(self.oracle(w))
        if mask.shape != (self.d,) or mask.dtype != bool:
            raise param_error(
                "oracle",
                owner,
                f"an oracle returning a bool mask of shape ({self.d},)",
                describe(mask),
            )
        size = int(np.count_nonzero(mask))
        if size > self.m:
            raise param_error(
                "oracle", owner, f"an oracle returning at most m = {self.m} arms", f"{size} arms"
            )
        feasible = getattr(self.oracle, "feasible", None)
        if feasible is not None and not feasible(mask):
            raise param_error(
                "oracle",
                owner,
                "an oracle returning feasible actions",
                f"the infeasible action {np.flatnonzero(mask).tolist()}",
            )
        return mask

    # ----------------------------------------------------------------- evaluation
    def best_action(self, means: np.ndarray) -> np.ndarray:
        """:math:`\\arg\\max_A r(A, \\mu)` for the true means (not counted as a query: the
        wrapped oracle of a :class:`CountingOracle` is called). NaN is refused."""
        means = check_array("means", f"{type(self).__name__}.best_action", means, shape=(self.d,))
        if self.actions is not None:
            return self.actions[int(np.argmax([self.value(a, means) for a in self.actions]))]
        return np.asarray(getattr(self.oracle, "oracle", self.oracle)(means), dtype=bool)

    def value(self, mask: np.ndarray, means: np.ndarray) -> float:
        """:math:`r(A, \\mu)`: the expected reward of an action (linear unless ``reward``)."""
        return float(means[mask].sum()) if self.reward is None else float(self.reward(mask, means))
