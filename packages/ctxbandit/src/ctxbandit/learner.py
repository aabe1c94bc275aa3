"""What every learner of this package shares: the act/update protocol on one oracle.

Each round the learner receives the context A_t (:meth:`Learner.act`), returns an action
a_t ∈ A_t, then receives only the scalar loss ℓ_t = ⟨a_t, y_t⟩ + noise (:meth:`Learner.update`).
The played actions are kept in ``history_actions_`` (t, d) for :func:`ctxbandit.pseudo_regret`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ctxbandit.oracles import Oracle
from paperkit import check_int, check_real

__all__ = ["Learner"]


class Learner:
    """Base class: argument checks, the round protocol and the action history."""

    def __init__(
        self, d: int, oracle: str | Callable, random_state: int | None, loss_scale: float = 1.0
    ) -> None:
        owner = type(self).__name__
        self.d = check_int("d", owner, d, low=1, high=10**5)
        self.oracle = Oracle(oracle, owner)
        if random_state is not None:
            check_int("random_state", owner, random_state, low=0)
        self.random_state = random_state
        self.loss_scale = check_real("loss_scale", owner, loss_scale, low=0, low_open=True)
        self.rng = np.random.default_rng(random_state)
        self.t_ = 0  # rounds completed
        self._actions: list[np.ndarray] = []
        self._pending: tuple[Any, np.ndarray] | None = None

    @property
    def n_oracle_calls_(self) -> int:
        """Oracle evaluations so far (a (context, θ) pair each)."""
        return self.oracle.n_calls

    @property
    def history_actions_(self) -> np.ndarray:
        """The actions played, ``(t, d)``."""
        return np.array(self._actions).reshape(len(self._actions), self.d)

    def act(self, context: Any) -> np.ndarray:
        """The action a_t ∈ A_t (a float ``(d,)`` array) for the context A_t.

        ``context``: a dict ``{"mask", "k"}`` (oracle ``"topk"``), a ``(K_t, d)`` array
        (``"finite"``) or anything a callable oracle takes. A context of another dimension, with
        k > available items, or with NaN is refused (ValueError naming 'context')."""
        if self._pending is not None:
            raise RuntimeError(f"{type(self).__name__}.act called twice without update")
        context = self.oracle.check_context(context, self.d)
        action = np.asarray(self._act(context), dtype=float)
        self._pending = (context, action)
        return action.copy()

    def update(self, loss: float) -> None:
        """Feedback of the round: the observed scalar loss ℓ_t (finite; NaN/inf refused)."""
        owner = f"{type(self).__name__}.update"
        if self._pending is None:
            raise RuntimeError(f"{owner} called before act")
        if isinstance(loss, np.ndarray) and loss.shape == ():
            loss = loss.item()
        loss = check_real("loss", owner, loss)
        context, action = self._pending
        self._update(context, action, loss)
        self._actions.append(action)
        self._pending = None
        self.t_ += 1

    def _act(self, context: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _update(self, context: Any, action: np.ndarray, loss: float) -> None:
        raise NotImplementedError  # pragma: no cover - abstract
