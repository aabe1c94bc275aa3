"""Drift detectors on the loss stream (written here, numpy/scipy; no river) and the
budget-gated :class:`DetectorPolicy` baseline.

- ADWIN (Bifet & Gavalda 2007): keep a window W of recent values (at most ``max_window``); drift
  when some split W = W0 W1 has |mean(W0) - mean(W1)| >= eps_cut with
  eps_cut = sqrt(2 m var(W) ln(2/d') ) + 2 ln(2/d') / (3 m), 1/m = 1/n0 + 1/n1, d' = delta/ln n;
  then drop W0. Every split is checked (O(|W|) per step, vectorised).
- DDM (Gama et al. 2004) for a real-valued loss: running mean p_i and s_i = sd_i / sqrt(i);
  drift when p_i + s_i >= p_min + 3 s_min (reset), with (p_min, s_min) at the minimum of p + s.
- KSWIN (Raab et al. 2020): a two-sample Kolmogorov-Smirnov test between the last ``stat_size``
  values and a sample of the older part of a sliding window of ``window_size``; drift when
  p < alpha.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
from scipy.stats import ks_2samp

from paperkit import check_bool, check_choice, check_int, check_real
from rccda.policies import Policy

__all__ = ["DetectorPolicy", "make_detector"]


class _ADWIN:
    def __init__(self, delta: float = 0.002, max_window: int = 500, min_side: int = 5) -> None:
        self.delta, self.min_side = delta, min_side
        self.window: deque[float] = deque(maxlen=max_window)

    def update(self, x: float) -> bool:
        self.window.append(x)
        n = len(self.window)
        if n < 2 * self.min_side:
            return False
        w = np.fromiter(self.window, float, n)
        cs = np.cumsum(w)
        n0 = np.arange(self.min_side, n - self.min_side + 1)
        n1 = n - n0
        mu0 = cs[n0 - 1] / n0
        mu1 = (cs[-1] - cs[n0 - 1]) / n1
        m = 1.0 / (1.0 / n0 + 1.0 / n1)
        dd = math.log(2.0 * math.log(n) / self.delta)
        eps = np.sqrt(2.0 * w.var() * dd / m) + 2.0 * dd / (3.0 * m)
        cut = np.flatnonzero(np.abs(mu0 - mu1) >= eps)
        if cut.size == 0:
            return False
        for _ in range(int(n0[cut[-1]])):
            self.window.popleft()
        return True


class _DDM:
    def __init__(self, min_instances: int = 30, drift_level: float = 3.0) -> None:
        self.min_instances, self.level = min_instances, drift_level
        self._reset()

    def _reset(self) -> None:
        self.n, self.mean, self.m2 = 0, 0.0, 0.0
        self.best = math.inf
        self.p_min = self.s_min = 0.0

    def update(self, x: float) -> bool:
        self.n += 1
        d = x - self.mean
        self.mean += d / self.n
        self.m2 += d * (x - self.mean)
        if self.n < self.min_instances:
            return False
        s = math.sqrt(self.m2 / (self.n - 1) / self.n)
        if self.mean + s < self.best:
            self.best, self.p_min, self.s_min = self.mean + s, self.mean, s
        if self.mean + s >= self.p_min + self.level * self.s_min and self.s_min > 0:
            self._reset()
            return True
        return False


class _KSWIN:
    def __init__(
        self, alpha: float = 0.005, window_size: int = 100, stat_size: int = 30, seed: int = 0
    ) -> None:
        self.alpha, self.stat_size = alpha, stat_size
        self.window: deque[float] = deque(maxlen=window_size)
        self.rng = np.random.default_rng(seed)

    def update(self, x: float) -> bool:
        self.window.append(x)
        if len(self.window) < self.window.maxlen:
            return False
        w = np.fromiter(self.window, float, len(self.window))
        recent, old = w[-self.stat_size :], w[: -self.stat_size]
        sample = self.rng.choice(old, self.stat_size, replace=False)
        if ks_2samp(sample, recent).pvalue < self.alpha:
            self.window.clear()
            self.window.extend(recent)
            return True
        return False


DETECTORS = {"adwin": _ADWIN, "ddm": _DDM, "kswin": _KSWIN}


def make_detector(detector: str = "adwin", seed: int = 0):
    """A fresh detector (``"adwin"``, ``"ddm"``, ``"kswin"``) with its default settings; its
    ``update(x) -> bool`` takes one loss value and says whether drift was detected."""
    check_choice("detector", "make_detector", detector, tuple(DETECTORS))
    seed = check_int("seed", "make_detector", seed, low=0)
    return _KSWIN(seed=seed) if detector == "kswin" else DETECTORS[detector]()


class DetectorPolicy(Policy):
    """Detector-triggered updates, gated by the budget.

    The detector watches the loss stream; each detection opens an adaptation phase of ``burst``
    steps in which the policy updates at every step, but (``gated=True``) only while the total
    cost stays within the budget: sum_{s<=t} c_s pi_s <= lambda_bar (t + 1). The first
    ``burst`` steps (the initial fit) count as an adaptation phase too. ``gated=False`` ignores
    the budget (detectors alone give no budget guarantee).

    NaN policy: a NaN, infinite or negative loss is refused with a ValueError naming ``loss``.
    """

    def __init__(
        self,
        detector: str = "adwin",
        budget: float = 0.2,
        burst: int = 20,
        gated: bool = True,
        seed: int = 0,
        cost: float = 1.0,
    ) -> None:
        owner = "DetectorPolicy"
        self.detector = check_choice("detector", owner, detector, tuple(DETECTORS))
        self.budget = check_real("budget", owner, budget, low=0, low_open=True, high=1)
        self.burst = check_int("burst", owner, burst, low=1, high=10**7)
        self.gated = check_bool("gated", owner, gated)
        self.seed = check_int("seed", owner, seed, low=0)
        super().__init__(cost)

    def reset(self) -> DetectorPolicy:
        super().reset()
        self._detector = make_detector(self.detector, self.seed)
        self._left = self.burst
        self.detections_: list[int] = []
        return self

    def _decide(self, loss: float, c: float) -> bool:
        if self._detector.update(loss):
            self.detections_.append(self.t_)
            self._left = self.burst
        if self._left <= 0:
            return False
        self._left -= 1
        return not self.gated or self.spent_ + c <= self.budget * (self.t_ + 1) + 1e-9
