"""Update policies: RCCDA's drift-plus-penalty rule (the paper's Algorithm 1) and the baselines.

Every policy is called once per time step, after the model has predicted on the batch, with the
batch's (prequential) loss ``loss`` >= 0 and the update's cost ``c_t`` (default ``cost``); it
returns the decision pi_t (True: update). NaN policy: a NaN or infinite loss or cost is refused
with a ValueError naming it.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from paperkit import check_choice, check_int, check_real

__all__ = [
    "AlwaysPolicy",
    "NeverPolicy",
    "PeriodicPolicy",
    "Policy",
    "RCCDAPolicy",
    "RandomPolicy",
    "budget_bound",
    "queue_bound",
]


def queue_bound(V: float, loss_max: float, loss_floor: float = 0.0, cost_max: float = 1.0) -> float:
    """Q_max = V (l_max - l*) + c_max, the bound on RCCDA's virtual queue for costs c_t >= 1
    (guarantee (i) of the paper's analysis, Sec. 4): once Q_t >= V (l_max - l* - tau) no update
    happens, and one step adds at most c_max.

    >>> queue_bound(2.0, 1.0, 0.0, 1.0)
    3.0
    """
    V = check_real("V", "queue_bound", V, low=0, low_open=True)
    loss_max = check_real("loss_max", "queue_bound", loss_max, low=0)
    loss_floor = check_real("loss_floor", "queue_bound", loss_floor, low=0)
    cost_max = check_real("cost_max", "queue_bound", cost_max, low=0, low_open=True)
    return V * max(loss_max - loss_floor, 0.0) + cost_max


def budget_bound(budget: float, q_max: float, T: int) -> float:
    """lambda_bar + Q_max / T: the largest average cost RCCDA can realise over T steps, from
    sum_t c_t pi_t <= lambda_bar T + Q_T (guarantee (ii)).

    >>> budget_bound(0.2, 3.0, 100)
    0.23
    """
    budget = check_real("budget", "budget_bound", budget, low=0, low_open=True, high=1)
    q_max = check_real("q_max", "budget_bound", q_max, low=0)
    T = check_int("T", "budget_bound", T, low=1)
    return budget + q_max / T


class Policy:
    """Base of every policy: the step counter, the cost bookkeeping and the history.

    Attributes (after :meth:`step`): ``t_`` steps seen, ``n_updates_`` updates made,
    ``spent_`` total cost spent, ``history_`` a list of ``(t, loss, Q_t, decision)``
    (Q_t is 0 for policies without a queue), ``queue_`` the current queue (0 without one).
    """

    def __init__(self, cost: float = 1.0) -> None:
        self.cost = check_real("cost", type(self).__name__, cost, low=0, low_open=True)
        self.reset()

    def reset(self) -> Policy:
        """Forget every step (a fresh run)."""
        self.t_, self.n_updates_, self.spent_, self.queue_ = 0, 0, 0.0, 0.0
        self.history_: list[tuple[int, float, float, bool]] = []
        return self

    @property
    def rate_(self) -> float:
        """Realised average cost per step, (1/T) sum_t c_t pi_t (0 before the first step)."""
        return self.spent_ / self.t_ if self.t_ else 0.0

    def _check(self, loss: Any, cost: Any) -> tuple[float, float]:
        owner = f"{type(self).__name__}.step"
        loss = check_real("loss", owner, loss, low=0)
        c = self.cost if cost is None else check_real("cost", owner, cost, low=0, low_open=True)
        return loss, c

    def _decide(self, loss: float, c: float) -> bool:
        raise NotImplementedError

    def step(self, loss: float, cost: float | None = None) -> bool:
        """Record the loss l_t >= 0 of the current model on batch t and return pi_t.

        ``cost`` is this step's c_t > 0 (None: the policy's ``cost``). NaN/inf refused.
        """
        loss, c = self._check(loss, cost)
        q = self.queue_
        decision = bool(self._decide(loss, c))
        if decision:
            self.n_updates_ += 1
            self.spent_ += c
        self.history_.append((self.t_, loss, q, decision))
        self.t_ += 1
        return decision


class RCCDAPolicy(Policy):
    """RCCDA (the paper's Algorithm 1): a virtual queue and a drift-plus-penalty threshold rule.

    The queue accumulates overspending: Q_0 = 0, Q_{t+1} = max(Q_t + c_t pi_t - lambda_bar, 0).
    Minimising V x (the bound on the next loss) + Q_t c_t pi_t over pi_t in {0, 1} gives

        pi_t = 1  iff  V (l~_t - l* - tau) > Q_t c_t,

    with l~_t the loss signal (``signal="last"``: the batch loss l_t), l* the loss floor
    (``loss_floor="running_min"``: the minimum of the previous ``window`` losses, 0 at t = 0; or a
    constant >= 0), tau >= 0 the drift threshold (it absorbs the gradient-noise term
    L eta^2 sigma^2 / 2 of the loss bound) and V > 0 the accuracy/budget trade-off.
    ``signal="accumulated"``: A_t = sum of (l_s - l*_s - tau)_+ since the last update, and
    pi_t = 1 iff V A_t > Q_t c_t (a reconstruction of the paper's accumulated-loss variant).

    Guarantees: sum_{t<T} c_t pi_t <= lambda_bar T + Q_T for either signal (telescoping the
    queue), and for ``signal="last"`` Q_t <= V (l_max - l*) + c_max (:func:`queue_bound`,
    costs >= 1), so the average cost is <= lambda_bar + Q_max / T. The accumulated signal can
    exceed l_max, so its queue settles higher (about V l_max / lambda_bar); bound (i) is not
    claimed for it.

    Two consequences of the rule:

    - budget is saved only while the signal l~_t - l* - tau is <= 0; when it is positive most of
      the time, the queue settles where updates happen at exactly rate lambda_bar, drift or not
      (with the running-min floor the signal is the batch noise above the recent minimum, so tau
      must exceed that noise for savings in stationary phases);
    - with the running-min floor a constant loss gives l - l* = 0 after the first step: no
      further update (no evidence of drift).

    NaN policy: a NaN, infinite or negative loss is refused with a ValueError naming ``loss``.

    >>> pol = RCCDAPolicy(budget=0.5, V=2.0, drift_threshold=0.0, loss_floor=0.0)
    >>> [pol.step(1.0) for _ in range(5)], pol.queue_
    ([True, True, True, True, False], 1.5)
    """

    def __init__(
        self,
        budget: float = 0.2,
        V: float = 10.0,
        drift_threshold: float = 0.05,
        loss_floor: str | float = "running_min",
        window: int = 50,
        signal: str = "last",
        cost: float = 1.0,
    ) -> None:
        owner = "RCCDAPolicy"
        self.budget = check_real("budget", owner, budget, low=0, low_open=True, high=1)
        self.V = check_real("V", owner, V, low=0, low_open=True)
        self.drift_threshold = check_real("drift_threshold", owner, drift_threshold, low=0)
        if isinstance(loss_floor, str):
            check_choice("loss_floor", owner, loss_floor, ("running_min",))
        else:
            loss_floor = check_real("loss_floor", owner, loss_floor, low=0)
        self.loss_floor = loss_floor
        self.window = check_int("window", owner, window, low=1, high=10**7)
        self.signal = check_choice("signal", owner, signal, ("last", "accumulated"))
        super().__init__(cost)

    def reset(self) -> RCCDAPolicy:
        super().reset()
        # the running minimum over the last `window` losses: a monotone deque of (t, loss),
        # O(1) amortised per step
        self._mins: deque[tuple[int, float]] = deque()
        self._accumulated = 0.0
        return self

    def floor(self) -> float:
        """The current loss floor l*: the constant, or the running minimum (0 with no history)."""
        if isinstance(self.loss_floor, float):
            return self.loss_floor
        while self._mins and self._mins[0][0] < self.t_ - self.window:
            self._mins.popleft()
        return self._mins[0][1] if self._mins else 0.0

    def _decide(self, loss: float, c: float) -> bool:
        excess = loss - self.floor() - self.drift_threshold
        if self.signal == "accumulated":
            self._accumulated += max(excess, 0.0)
            excess = self._accumulated
        decision = self.V * excess > self.queue_ * c
        if decision:
            self._accumulated = 0.0
        self.queue_ = max(self.queue_ + c * decision - self.budget, 0.0)
        while self._mins and self._mins[-1][1] >= loss:
            self._mins.pop()
        self._mins.append((self.t_, loss))
        return decision


class PeriodicPolicy(Policy):
    """Periodic updates at rate lambda_bar: a credit grows by lambda_bar per step and an update
    is made whenever it covers the cost (every 1/lambda_bar steps for c = 1).

    >>> pol = PeriodicPolicy(budget=0.25)
    >>> [pol.step(0.5) for _ in range(8)]
    [False, False, False, True, False, False, False, True]
    """

    def __init__(self, budget: float = 0.2, cost: float = 1.0) -> None:
        self.budget = check_real("budget", "PeriodicPolicy", budget, low=0, low_open=True, high=1)
        super().__init__(cost)

    def reset(self) -> PeriodicPolicy:
        super().reset()
        self._credit = 0.0
        return self

    def _decide(self, loss: float, c: float) -> bool:
        self._credit += self.budget
        if self._credit >= c - 1e-9:
            self._credit -= c
            return True
        return False


class RandomPolicy(Policy):
    """Random updates: pi_t ~ Bernoulli(lambda_bar / c_t), so E[c_t pi_t] = lambda_bar."""

    def __init__(self, budget: float = 0.2, seed: int = 0, cost: float = 1.0) -> None:
        self.budget = check_real("budget", "RandomPolicy", budget, low=0, low_open=True, high=1)
        self.seed = check_int("seed", "RandomPolicy", seed, low=0)
        super().__init__(cost)

    def reset(self) -> RandomPolicy:
        super().reset()
        self._rng = np.random.default_rng(self.seed)
        return self

    def _decide(self, loss: float, c: float) -> bool:
        return bool(self._rng.random() < min(self.budget / c, 1.0))


class AlwaysPolicy(Policy):
    """Update at every step (the budget-violating reference, rate 1)."""

    def _decide(self, loss: float, c: float) -> bool:
        return True


class NeverPolicy(Policy):
    """Never update (the model stays as initialised)."""

    def _decide(self, loss: float, c: float) -> bool:
        return False
