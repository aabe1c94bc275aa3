r"""The "buttons" multi-armed bandit with uncertainty-driven exploration (paper §5).

K arms with Bernoulli rewards: a best arm (drawn by the seed) pays with probability
``midpoint + gap/2``, the others ``midpoint - gap/2``. The in-context learner sees the history
of (one-hot arm, reward) pairs as its context. After ``random_trials`` random pulls, each policy
pulls the arm maximising its score:

- ``"vud"``: :math:`q(r=1|a,D) + c\,V_e^*(a)`, the VUD epistemic lower bound with the probe on
  the same arm (K = 1, one candidate; the bound :math:`V_e(z=a) = H[q(r|a,D)] -
  E_{u}H[q(r|a,D\cup(a,u))]` is the information one more pull of the arm gives about its reward);
- ``"total"``: :math:`q(r=1|a,D) + c\,H[q(r|a,D)]`;
- ``"greedy"``: :math:`q(r=1|a,D)`;
- ``"ucb1"``: :math:`\hat\mu_a + \sqrt{2\ln t/n_a}` (no predictor);
- ``"thompson"``: a draw from the true Beta(1+s_a, 1+f_a) posterior (no predictor).

:math:`c` is ``exploration``. Ties are broken uniformly at random. Regret is cumulative:
:math:`R_t = \sum_{s\le t}(p^* - p_{a_s})`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from paperkit import check_choice, check_int, check_real, check_tensor, describe, param_error
from vud.info import entropy_
from vud.predictors import ICLPredictor

__all__ = ["BanditTrace", "arm_epistemic", "run_bandit"]

POLICIES = ("vud", "total", "greedy", "ucb1", "thompson")


@dataclass(frozen=True)
class BanditTrace:
    """``regret`` (T,) cumulative regret, ``actions`` (T,) arms pulled, ``rewards`` (T,),
    ``best_arm``."""

    regret: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    best_arm: int


def arm_epistemic(
    pred: ICLPredictor, ctx_x: torch.Tensor, ctx_y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""For every arm a (one-hot :math:`e_a`), in two batched predictor calls: the predictive
    :math:`q(r|e_a,D)` (K, 2), its entropy (K,) and :math:`V_e(z=e_a)` (K,) in nats, with
    :math:`V_a(e_a)=\sum_u q(u|e_a,D)\,H[q(r|e_a, D\cup\{(e_a,u)\})]`.

    ``ctx_x`` (n, K) one-hot rows, ``ctx_y`` (n,) rewards in {0, 1}, n ≥ 1. NaN policy: NaN/inf
    inputs are refused.

    >>> from vud import BayesOracleICL, BernoulliArmsPrior
    >>> oracle = BayesOracleICL(BernoulliArmsPrior(2))
    >>> p0, total, ve = arm_epistemic(oracle, torch.eye(2)[[0]], torch.ones(1))
    >>> bool(ve[0] < ve[1])  # the arm pulled once is better known than the arm never pulled
    True
    """
    owner = "arm_epistemic"
    _check_predictor(owner, pred, None)
    dims: dict = {}
    check_tensor("ctx_x", owner, ctx_x, shape=("n", "K"), dims=dims)
    check_tensor("ctx_y", owner, ctx_y, shape=("n",), dims=dims, dtype=None)
    return _arm_epistemic(pred, ctx_x, ctx_y.to(ctx_x.dtype))


def _check_predictor(owner: str, pred: Any, trials: int | None) -> None:
    ok = isinstance(pred, ICLPredictor) and pred.task == "classification"
    if not ok or pred.n_classes != 2:
        raise param_error(
            "predictor" if trials else "pred",
            owner,
            "a 2-class ICLPredictor",
            describe(pred),
            cls=TypeError,
        )
    limit = getattr(pred, "trained_max_ctx", None)
    if trials is not None and limit is not None and limit < trials:
        raise param_error(
            "predictor", owner, f"trained on contexts of at least trials={trials}", limit
        )


def _arm_epistemic(pred, ctx_x, ctx_y):
    n, K = ctx_x.shape
    arms = torch.eye(K, dtype=ctx_x.dtype)
    p0 = pred.predict(ctx_x[None], ctx_y[None], arms[None])[0]  # (K, 2)
    aug_x = torch.cat([ctx_x.expand(2 * K, n, K), arms.repeat_interleave(2, 0)[:, None]], dim=1)
    labels = torch.arange(2, dtype=ctx_y.dtype).repeat(K)[:, None]
    aug_y = torch.cat([ctx_y.expand(2 * K, n), labels], dim=1)
    after = pred.predict(aug_x, aug_y, arms.repeat_interleave(2, 0)[:, None])[:, 0].reshape(K, 2, 2)
    total = entropy_(p0)
    va = (p0 * entropy_(after)).sum(-1)
    return p0, total, total - va


def _argmax(scores: np.ndarray, rng: np.random.Generator) -> int:
    best = np.flatnonzero(scores >= scores.max() - 1e-12)
    return int(rng.choice(best))


def run_bandit(
    policy: str,
    predictor: ICLPredictor | None,
    n_arms: int = 5,
    midpoint: float = 0.5,
    gap: float = 0.2,
    trials: int = 100,
    random_trials: int = 3,
    exploration: float = 2.0,
    seed: int = 0,
) -> BanditTrace:
    """Play the buttons bandit with one policy; see the module docstring.

    ``predictor``: a classification :class:`vud.ICLPredictor` over one-hot arms (2 classes) for
    ``"vud"``, ``"total"`` and ``"greedy"``; ignored (may be None) for ``"ucb1"`` and
    ``"thompson"``. A predictor with a ``trained_max_ctx`` below ``trials`` is refused (a PFN
    must not be run beyond the context lengths it was trained on). NaN policy: not applicable
    (scalar arguments, checked).

    >>> trace = run_bandit("thompson", None, trials=20, seed=1)
    >>> trace.regret.shape, bool(np.all(np.diff(trace.regret) >= 0))
    ((20,), True)
    """
    owner = "run_bandit"
    check_choice("policy", owner, policy, POLICIES)
    K = check_int("n_arms", owner, n_arms, low=2, high=1000)
    gap = check_real("gap", owner, gap, low=0, high=1)
    midpoint = check_real("midpoint", owner, midpoint, low=gap / 2, high=1 - gap / 2)
    T = check_int("trials", owner, trials, low=1, high=100_000)
    R = check_int("random_trials", owner, random_trials, low=0, high=T)
    c = check_real("exploration", owner, exploration, low=0)
    seed = check_int("seed", owner, seed, low=0)
    needs_model = policy in ("vud", "total", "greedy")
    if needs_model:
        _check_predictor(owner, predictor, T)
        if getattr(predictor, "d_x", K) != K:
            raise param_error("predictor", owner, f"a predictor over {K} arms", predictor.d_x)
    rng = np.random.default_rng(seed)
    best = int(rng.integers(K))
    probs = np.full(K, midpoint - gap / 2)
    probs[best] = midpoint + gap / 2
    actions, rewards = np.zeros(T, dtype=int), np.zeros(T)
    for t in range(T):
        if t < R:
            a = int(rng.integers(K))
        elif needs_model:
            a = _argmax(_model_scores(policy, predictor, actions[:t], rewards[:t], K, c), rng)
        else:
            a = _argmax(_classic_scores(policy, actions[:t], rewards[:t], K, t, rng), rng)
        actions[t], rewards[t] = a, rng.binomial(1, probs[a])
    regret = np.cumsum(probs[best] - probs[actions])
    return BanditTrace(regret, actions, rewards, best)


def _model_scores(policy, predictor, actions, rewards, K, c) -> np.ndarray:
    ctx_x = torch.nn.functional.one_hot(torch.as_tensor(actions), K).float()
    ctx_y = torch.as_tensor(rewards, dtype=torch.float32)
    if policy == "vud":
        p0, _, epistemic = _arm_epistemic(predictor, ctx_x, ctx_y)
        return (p0[:, 1] + c * epistemic).double().numpy()
    p0 = predictor.predict(ctx_x[None], ctx_y[None], torch.eye(K)[None])[0]
    bonus = entropy_(p0) if policy == "total" else torch.zeros(K)
    return (p0[:, 1] + c * bonus).double().numpy()


def _classic_scores(policy, actions, rewards, K, t, rng) -> np.ndarray:
    s = np.bincount(actions, weights=rewards, minlength=K)
    n = np.bincount(actions, minlength=K).astype(float)
    if policy == "thompson":
        return rng.beta(1 + s, 1 + n - s)
    with np.errstate(divide="ignore", invalid="ignore"):
        ucb = s / n + np.sqrt(2 * np.log(max(t, 1)) / n)
    return np.where(n == 0, np.inf, ucb)
