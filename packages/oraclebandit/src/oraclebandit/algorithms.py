"""CUCB, the doubling baseline, AROQ-CUCB and SROQ-CUCB (Sections 3 and 4 of the paper).

All share the index of :class:`oraclebandit.base.SemiBanditAlgorithm`; they differ in *when* the
oracle is queried:

- :class:`CUCB`: every round (:math:`T` queries);
- :class:`DoublingCUCB`: before rounds :math:`1, 2, 4, 8, \\dots` (:math:`\\lfloor \\log_2 T
  \\rfloor + 1` queries), the naive rare-query baseline;
- :class:`AROQ` (adaptive rare oracle queries): per-arm doubly-exponential grids
  (:func:`oraclebandit.schedules.aroq_grid`); a query when some arm's within-epoch play count
  reaches its threshold, at most :math:`1 + dE` queries;
- :class:`SROQ` (scheduled rare oracle queries): a global grid
  (:func:`oraclebandit.schedules.sroq_grid`); at each epoch start one parallel batch of
  :math:`d + 2` queries, elimination, then round-robin play; :math:`K = O(\\log\\log T)` adaptive
  rounds whatever :math:`d`.

>>> import numpy as np
>>> from oraclebandit import AROQ, TopMOracle
>>> from oraclebandit.envs import CorrelatedGaussianSemiBandit, run
>>> env = CorrelatedGaussianSemiBandit(np.linspace(0.1, 0.9, 6), 0.01 * np.eye(6), seed=0)
>>> res = run(env, AROQ(d=6, m=2, T=4096, oracle=TopMOracle(6, 2), random_state=0), T=4096)
>>> res["n_queries"] <= 1 + 6 * 5, res["actions"][-1].nonzero()[0].tolist()
(True, [4, 5])
"""

from __future__ import annotations

import numpy as np

from oraclebandit.base import SemiBanditAlgorithm
from oraclebandit.schedules import aroq_grid, sroq_grid
from paperkit import param_error

__all__ = ["AROQ", "CUCB", "SROQ", "DoublingCUCB"]


class CUCB(SemiBanditAlgorithm):
    """CUCB (Chen et al. 2013): :math:`A_t = \\mathrm{Oracle}(\\mathrm{UCB}(t))` every round.
    Arguments as :class:`oraclebandit.base.SemiBanditAlgorithm`."""

    def _start(self) -> None:
        self._play(self._maximize(self._index()), "every round")

    def _observed(self, idx: np.ndarray) -> None:
        self._play(self._maximize(self._index()), "every round")


class DoublingCUCB(SemiBanditAlgorithm):
    """CUCB that queries only before rounds :math:`t = 2^j` (:math:`j = 0, 1, \\dots`) and plays
    the last answer in between: :math:`O(\\log T)` queries, the naive rare-query baseline.
    Arguments as :class:`oraclebandit.base.SemiBanditAlgorithm`."""

    def _start(self) -> None:
        self._play(self._maximize(self._index()), "round 1")

    def _observed(self, idx: np.ndarray) -> None:
        upcoming = self.t + 1
        if upcoming & (upcoming - 1) == 0:
            self._play(self._maximize(self._index()), f"round {upcoming} = 2^j")


class AROQ(SemiBanditAlgorithm):
    """AROQ-CUCB: adaptive rare oracle queries.

    Every base arm ``i`` has an epoch :math:`e_i` (from 1) and a within-epoch play count
    :math:`c_i`. After each round, every arm with :math:`c_i \\ge \\tau_{e_i}` moves to the next
    epoch (:math:`c_i = 0`, and :math:`\\tau = \\infty` after epoch :math:`E`); if any moved,
    one query :math:`\\hat A = \\mathrm{Oracle}(\\mathrm{UCB}(t))` replaces the played action.
    Thresholds :math:`\\tau_e = \\lceil T'^{1 - 2^{-e}} \\rceil`, :math:`T' = \\lceil T m / d
    \\rceil`. Arguments as :class:`oraclebandit.base.SemiBanditAlgorithm`; ``tau_`` holds the
    grid.
    """

    def _start(self) -> None:
        self.tau_ = aroq_grid(self.T, self.m, self.d)
        self._threshold = np.append(self.tau_, np.iinfo(np.int64).max)
        self.arm_epoch_ = np.zeros(self.d, dtype=np.int64)  # e_i - 1
        self._within = np.zeros(self.d, dtype=np.int64)
        self._play(self._maximize(self._index()), "initial query")

    def _observed(self, idx: np.ndarray) -> None:
        within = self._within
        within[idx] += 1
        due = within[idx] >= self._threshold[self.arm_epoch_[idx]]
        if due.any():
            moved = idx[due]
            self.arm_epoch_[moved] += 1
            within[moved] = 0
            self._play(self._maximize(self._index()), f"arms {moved.tolist()} crossed")


class SROQ(SemiBanditAlgorithm):
    """SROQ-CUCB: scheduled rare oracle queries.

    Epoch ``k`` covers rounds :math:`t_{k-1} + 1, \\dots, t_k` of
    :func:`oraclebandit.schedules.sroq_grid`. At its start, one parallel batch from the data so
    far: :math:`\\hat A = \\mathrm{Oracle}(\\hat\\mu)`, :math:`\\bar A = \\mathrm{Oracle}
    (\\mathrm{UCB})` and, per arm, :math:`\\tilde A_i = \\mathrm{Oracle}(\\mathrm{UCB} + B e_i)`
    with :math:`B = 2m` (the best optimistic action forced to hold ``i``). :math:`\\tilde A_i`
    survives when :math:`\\mathrm{UCB}(\\tilde A_i) \\ge \\mathrm{LCB}(\\hat A)`; the epoch plays
    :math:`\\{\\bar A\\} \\cup \\{\\text{survivors}\\}` (duplicates removed) round-robin.
    Arguments as :class:`oraclebandit.base.SemiBanditAlgorithm`; a non-linear ``reward`` needs
    ``oracle_kind="enumerate"`` (the forced-arm bonus assumes a linear oracle). ``grid_``
    holds the epoch ends, ``candidates_`` the current candidate set.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.reward is not None and self.oracle_kind != "enumerate":
            raise param_error(
                "oracle_kind", "SROQ", "'enumerate' with a non-linear reward", self.oracle_kind
            )

    def _start(self) -> None:
        self.grid_ = sroq_grid(self.T)
        self._epoch = 0
        self._batch()

    def _batch(self) -> None:
        index = self._index()
        greedy = self._greedy()
        found = [self._maximize(index)]
        bonus = np.zeros(self.d)
        for i in range(self.d):
            bonus[i] = 2.0 * self.m
            found.append(self._maximize(index, bonus))
            bonus[i] = 0.0
        floor = self._bounds(greedy)[1]
        kept = found[:1] + [a for a in found[1:] if self._bounds(a)[0] >= floor]
        unique = list({a.tobytes(): a for a in kept}.values())
        self.candidates_ = unique
        self._candidate_idx = [np.flatnonzero(a) for a in unique]
        self._turn = 0
        self._mask, self._idx = unique[0], self._candidate_idx[0]
        self.n_adaptive_rounds_ += 1
        self.epoch_log_.append(
            {
                "round": self.t + 1,
                "queries": self.n_queries_,
                "why": f"epoch {self._epoch + 1}",
                "candidates": len(unique),
            }
        )

    def _observed(self, idx: np.ndarray) -> None:
        if self.t == self.grid_[self._epoch]:
            self._epoch += 1
            self._batch()
            return
        self._turn = (self._turn + 1) % len(self.candidates_)
        self._mask, self._idx = self.candidates_[self._turn], self._candidate_idx[self._turn]
