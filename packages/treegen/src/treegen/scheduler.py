r"""Accuracy schedules :math:`\beta_K(t)` for categorical Bayesian Flow Networks.

For a variable with :math:`K` classes the BFN flow distribution at accuracy :math:`\beta` is
:math:`\theta = \mathrm{softmax}(y)`, :math:`y \sim \mathcal N(\beta(K e_x - 1), \beta K I)`. Its
normalised expected entropy :math:`h_K(\beta) = \mathbb E[H(\theta)] / \log K` falls from 1 at
:math:`\beta = 0` towards 0, at a speed that depends on :math:`K`: one schedule
:math:`\beta(t) = \beta_1 t^2` for all variables (Graves et al., 2023) makes a binary variable
nearly certain while a 7-way one is still vague. TreeGen's scheduler instead picks, for every
:math:`K`, the schedule whose entropy follows one target curve :math:`g(t)`:
:math:`\beta_K(t) = h_K^{-1}(g(t))`, here the linear :math:`g(t) = 1 - (1 - \varepsilon) t`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from paperkit import check_array, check_choice, check_int, check_real, check_tensor, param_error

__all__ = ["EntropyScheduler", "QuadraticScheduler", "entropy_curve"]

#: Points of the t-grid on which every schedule is tabulated (piecewise linear in between).
T_GRID = 2049


def entropy_curve(K: int, betas: np.ndarray, n_mc: int = 4096, seed: int = 0) -> np.ndarray:
    r"""Monte Carlo :math:`h_K(\beta) = \mathbb E[H(\mathrm{softmax}(y))] / \log K` at each
    ``betas`` value, with :math:`y \sim \mathcal N(\beta (K e_1 - 1), \beta K I)`; the same
    ``n_mc`` standard normal draws serve every :math:`\beta` (common random numbers).

    >>> h = entropy_curve(3, np.array([0.0, 1.0, 100.0]))
    >>> round(float(h[0]), 12), bool(h[0] > h[1] > h[2])
    (1.0, True)
    """
    owner = "entropy_curve"
    K = check_int("K", owner, K, low=2, high=4096)
    betas = check_array("betas", owner, betas, ndim=1)
    if (betas < 0).any():
        raise param_error("betas", owner, "non-negative accuracies", float(betas.min()))
    n_mc = check_int("n_mc", owner, n_mc, low=1, high=10**6)
    seed = check_int("seed", owner, seed, low=0)
    z = np.random.default_rng(seed).standard_normal((n_mc, K))
    mean = K * np.eye(K)[0] - 1.0
    betas = np.asarray(betas, dtype=np.float64)
    out = np.empty(betas.size)
    for start in range(0, betas.size, 32):  # (chunk, n_mc, K) at a time
        b = betas[start : start + 32, None, None]
        y = b * mean + np.sqrt(b * K) * z
        y -= y.max(-1, keepdims=True)
        logp = y - np.log(np.exp(y).sum(-1, keepdims=True))
        out[start : start + 32] = -(np.exp(logp) * logp).sum(-1).mean(-1) / np.log(K)
    return out


class _Tabulated:
    """A schedule tabulated on ``T_GRID`` points of t for K = 0..k_max (rows K <= 1 are zero)."""

    k_max: int
    table: torch.Tensor  # (k_max + 1, T_GRID) float64

    def _check(self, K: Any, t: Any, owner: str) -> tuple[torch.Tensor, torch.Tensor]:
        t = check_tensor("t", owner, t, finite=True, nonempty=False)
        if ((t < 0) | (t > 1)).any():
            raise param_error("t", owner, "times in [0, 1]", float(t.min()))
        if isinstance(K, torch.Tensor):
            K = check_tensor("K", owner, K, dtype="int", nonempty=False)
            if ((K < 1) | (self.k_max < K)).any():
                raise param_error("K", owner, f"class counts in [1, {self.k_max}]", K.tolist())
        else:
            K = torch.tensor(check_int("K", owner, K, low=1, high=self.k_max))
        return K.to(t.device), t

    def _interp(self, table: torch.Tensor, K: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        table = table.to(device=t.device, dtype=t.dtype)
        x = t * (T_GRID - 1)
        lo = x.floor().clamp(0, T_GRID - 2).long()
        w = x - lo
        K, lo = torch.broadcast_tensors(K, lo)
        w = w.expand(K.shape)
        return table[K, lo] * (1 - w) + table[K, lo + 1] * w

    def beta(self, K: int | torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        r""":math:`\beta_K(t)` for ``t`` in [0, 1] (``K`` an int or a tensor broadcasting with
        ``t``); NaN/inf in ``t`` are refused."""
        K, t = self._check(K, t, f"{type(self).__name__}.beta")
        return self._interp(self.table, K, t)

    def dbeta(self, K: int | torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        r""":math:`\beta_K'(t)`, the slope of the tabulated schedule's segment holding ``t``."""
        K, t = self._check(K, t, f"{type(self).__name__}.dbeta")
        slope = torch.diff(self.table, dim=1) * (T_GRID - 1)
        x = (t * (T_GRID - 1)).floor().clamp(0, T_GRID - 2).long()
        K, x = torch.broadcast_tensors(K, x)
        return slope.to(device=t.device, dtype=t.dtype)[K, x]


class EntropyScheduler(_Tabulated):
    r"""TreeGen's entropy-consistent schedule :math:`\beta_K(t) = h_K^{-1}(g(t))`.

    :math:`h_K` is :func:`entropy_curve` on a log-grid of :math:`\beta` (extended until
    :math:`h_K < \varepsilon / 2`), made monotone by a running minimum and inverted by linear
    interpolation; the target is ``"linear"``: :math:`g(t) = 1 - (1-\varepsilon) t`, or
    ``"cosine"``: :math:`g(t) = \varepsilon + (1-\varepsilon)\cos(\pi t / 2)`. ``K = 1`` is
    deterministic (:math:`\beta \equiv 0`). Tabulated for ``K <= k_max`` at construction.

    >>> s = EntropyScheduler(5)
    >>> b = s.beta(5, torch.tensor([0.0, 0.5, 1.0]))
    >>> float(b[0]), bool(b[1] < b[2])
    (0.0, True)
    """

    def __init__(
        self,
        k_max: int,
        target: str = "linear",
        eps: float = 0.01,
        n_mc: int = 4096,
        seed: int = 0,
    ) -> None:
        owner = "EntropyScheduler"
        self.k_max = check_int("k_max", owner, k_max, low=1, high=4096)
        self.target = check_choice("target", owner, target, ("linear", "cosine"))
        self.eps = check_real("eps", owner, eps, low=0, high=0.5, low_open=True)
        self.n_mc = check_int("n_mc", owner, n_mc, low=16, high=10**6)
        self.seed = check_int("seed", owner, seed, low=0)
        ts = np.linspace(0.0, 1.0, T_GRID)
        if self.target == "linear":
            goal = 1.0 - (1.0 - self.eps) * ts
        else:
            goal = self.eps + (1.0 - self.eps) * np.cos(np.pi * ts / 2)
        table = np.zeros((self.k_max + 1, T_GRID))
        self.curves: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for K in range(2, self.k_max + 1):
            betas, h = self._curve(K)
            self.curves[K] = (betas, h)
            # h is non-increasing; nudge flat runs so the inverse is a function
            h_strict = h - 1e-12 * np.arange(h.size)
            table[K] = np.interp(-goal, -h_strict, betas)
        self.table = torch.from_numpy(table)

    def _curve(self, K: int) -> tuple[np.ndarray, np.ndarray]:
        hi = 1.0
        while entropy_curve(K, np.array([hi]), 256, self.seed)[0] > self.eps / 4 and hi < 1e6:
            hi *= 2.0
        betas = np.concatenate([[0.0], np.geomspace(1e-4, hi, 400)])
        h = np.minimum.accumulate(entropy_curve(K, betas, self.n_mc, self.seed))
        return betas, h


class QuadraticScheduler(_Tabulated):
    r"""The standard BFN schedule :math:`\beta_K(t) = \beta_1 t^2` for every ``K >= 2``
    (Graves et al., 2023); ``K = 1`` is deterministic.

    >>> float(QuadraticScheduler(4, beta1=3.0).beta(3, torch.tensor(0.5)))
    0.75
    """

    def __init__(self, k_max: int, beta1: float = 3.0) -> None:
        owner = "QuadraticScheduler"
        self.k_max = check_int("k_max", owner, k_max, low=1, high=4096)
        self.beta1 = check_real("beta1", owner, beta1, low=0, low_open=True)
        ts = np.linspace(0.0, 1.0, T_GRID)
        table = np.zeros((self.k_max + 1, T_GRID))
        table[2:] = self.beta1 * ts**2
        self.table = torch.from_numpy(table)
