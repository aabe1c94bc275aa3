r"""mvOU-OTFM: the paper's simulation-free learning of the Schrödinger bridge (its
Algorithm 1).

1. Static SB: entropic OT between the snapshots with the mvOU cost (:func:`~mvou.entropic_plan`,
   ``reg = 1``), once per consecutive snapshot pair on the full samples (``coupling_scope=
   "global"``) or on a fresh 256 x 256 minibatch every step (``"minibatch"``).
2. Pairs :math:`(x_0, x_1) \sim \pi`, :math:`t \sim U[t_{\min}, 1 - t_{\min}]`,
   :math:`x_t = M_t + L_t\varepsilon` from the closed-form mvOU bridge.
3. Joint flow and score matching,

   .. math:: \mathcal L = \|v_\theta(t, x_t) - v_t(x_t \mid x_0, x_1)\|^2
             + \lambda\,\|L_t^\top s_\theta(t, x_t) + \varepsilon\|^2,

   with the probability-flow velocity and score of the bridge as targets
   (:meth:`~mvou.MvOU.bridge_targets`).
4. Inference: the SB SDE :math:`dX = (v_\theta + \tfrac12 D s_\theta)dt + \sigma dB` or the ODE
   :math:`dX = v_\theta dt`.

Several snapshots :math:`t_0 < \dots < t_K` are trained pair by pair, each interval rescaled to
[0, 1] (drift :math:`\Delta A`, diffusion :math:`\Delta D`), with shared networks of absolute time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from mvou._checks import times as check_times
from mvou.coupling import _check_ref, _cost, sinkhorn_log
from mvou.integrate import euler_maruyama
from mvou.ou import MvOU, _increasing, check_steps
from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    param_error,
)
from paperkit import progress as progress_bar

__all__ = ["MvOUOTFM", "estimate_drift_matrix", "fit_iterated"]

#: Frequencies of the sinusoidal time embedding (time normalised to [0, 1] over the snapshots).
FREQS = math.pi * 2.0 ** torch.arange(6)
#: Side of the per-step plan with ``coupling_scope="minibatch"`` (as in OT-CFM practice).
MINIBATCH = 256


class _TwinMLP(nn.Module):
    """The velocity and score MLPs, evaluated together by batched matmuls: each has ``depth``
    hidden layers of ``hidden`` SiLU units on [x, t, sin(w t), cos(w t)] (``nn.Linear``'s
    initialisation), and their weights are stacked on a leading axis of size 2."""

    def __init__(
        self, d: int, hidden: int, depth: int, generator: torch.Generator | None = None
    ) -> None:
        super().__init__()
        widths = [d + 1 + 2 * FREQS.numel()] + [hidden] * depth + [d]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for fan_in, fan_out in zip(widths, widths[1:], strict=False):
            bound = 1 / math.sqrt(fan_in)
            for shape, store in (
                ((2, fan_in, fan_out), self.weights),
                ((2, 1, fan_out), self.biases),
            ):
                init = torch.empty(shape).uniform_(-bound, bound, generator=generator)
                store.append(nn.Parameter(init))

    def forward(self, t: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        wt = t[:, None] * FREQS.to(x.dtype)
        h = torch.cat([x, t[:, None], wt.sin(), wt.cos()], dim=1).expand(2, -1, -1)
        last = len(self.weights) - 1
        for k, (W, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = torch.baddbmm(b, h, W)
            if k < last:
                h = nn.functional.silu(h)
        return h[0], h[1]


def _snapshots(owner: str, snapshots: Any, d: int, count: int | None = None) -> list:
    """Checked list of ``(n_k, d)`` snapshots: at least 2, or exactly ``count``."""
    if not isinstance(snapshots, (list, tuple)):
        raise param_error(
            "snapshots",
            owner,
            "a list of (n_k, d) tensors",
            Described(f"a {type(snapshots).__name__}"),
            cls=TypeError,
        )
    if count is None and len(snapshots) < 2:
        raise param_error("snapshots", owner, "at least 2 snapshots", len(snapshots))
    if count is not None and len(snapshots) != count:
        raise param_error(
            "snapshots", owner, f"one tensor per fitted time ({count})", len(snapshots)
        )
    for x in snapshots:
        check_tensor("snapshots", owner, x, shape=(None, d))
    return list(snapshots)


class MvOUOTFM(nn.Module):
    r"""mvOU-OTFM: flow and score networks for the SB relative to the
    mvOU reference ``ref``, trained without simulating the SDE.

    Args:
        ref: the reference :class:`~mvou.MvOU` in absolute time (per unit time).
        hidden, depth: width and number of hidden layers of both MLPs (SiLU).
        score_weight: :math:`\lambda` of the score-matching term.
        coupling: ``"ot"`` (the entropic SB plan) or ``"independent"`` (pairs drawn
            independently: the ablation of the OT step).
        coupling_scope: ``"global"`` (one plan per snapshot pair on the full samples) or
            ``"minibatch"`` (a fresh 256 x 256 plan every step).
        reg: entropic regularisation :math:`\varepsilon` of the plan (1 = the SB).
        t_min: bridge times are drawn from :math:`U[t_{\min}, 1 - t_{\min}]`.

    The networks compute in float32; the bridge targets in the reference's dtype. NaN policy:
    NaN and inf are refused in every argument of every method.
    """

    def __init__(
        self,
        ref: MvOU,
        hidden: int = 128,
        depth: int = 3,
        score_weight: float = 1.0,
        coupling: str = "ot",
        coupling_scope: str = "global",
        *,
        reg: float = 1.0,
        t_min: float = 1e-3,
    ) -> None:
        super().__init__()
        owner = "MvOUOTFM"
        self.ref = _check_ref(owner, ref)
        self.hidden = check_int("hidden", owner, hidden, low=1, high=8192)
        self.depth = check_int("depth", owner, depth, low=1, high=64)
        self.score_weight = check_real("score_weight", owner, score_weight, low=0)
        self.coupling = check_choice("coupling", owner, coupling, ("ot", "independent"))
        self.coupling_scope = check_choice(
            "coupling_scope", owner, coupling_scope, ("global", "minibatch")
        )
        self.reg = check_real("reg", owner, reg, low=0, low_open=True)
        self.t_min = check_real("t_min", owner, t_min, low=0, high=0.5, high_open=True)
        self.nets = _TwinMLP(ref.d, self.hidden, self.depth)
        self.times: list[float] = [0.0, 1.0]
        self.losses: list[float] = []

    # ---------------------------------------------------------------- training
    def _check_data(self, snapshots: Any, times: Any) -> tuple[list[torch.Tensor], list[float]]:
        owner = "MvOUOTFM.fit"
        data = [x.detach().to(self.ref.dtype) for x in _snapshots(owner, snapshots, self.ref.d)]
        if not isinstance(times, (list, tuple)) or any(
            isinstance(s, bool) or not isinstance(s, (int, float)) for s in times
        ):
            raise param_error(
                "times",
                owner,
                "a list of numbers",
                Described(f"a {type(times).__name__}"),
                cls=TypeError,
            )
        if len(times) != len(data):
            raise param_error("times", owner, f"one time per snapshot ({len(data)})", len(times))
        t = [check_real("times", owner, s) for s in times]
        if any(b <= a for a, b in zip(t, t[1:], strict=False)):
            raise param_error("times", owner, "strictly increasing", list(times))
        return data, t

    def _tnorm(self, t: torch.Tensor) -> torch.Tensor:
        """Absolute time mapped to [0, 1] over the snapshots (the networks' time input)."""
        t0, t1 = self.times[0], self.times[-1]
        return ((t - t0) / (t1 - t0)).float()

    def fit(
        self,
        snapshots: Sequence[torch.Tensor],
        times: Sequence[float],
        steps: int = 3000,
        batch: int = 256,
        lr: float = 1e-3,
        seed: int = 0,
        progress: bool = True,
    ) -> MvOUOTFM:
        r"""Train on snapshots ``(n_k, d)`` observed at increasing ``times`` (Adam, ``steps``
        steps of ``batch`` bridge samples split evenly over the consecutive pairs). Re-initialises
        the networks from ``seed``, so a fit is deterministic under its seed (on one thread).
        The loss per step is kept in ``self.losses``. Returns ``self``."""
        owner = "MvOUOTFM.fit"
        data, t = self._check_data(snapshots, times)
        steps = check_int("steps", owner, steps, low=1, high=10_000_000)
        batch = check_int("batch", owner, batch, low=len(data) - 1, high=1_000_000)
        lr = check_real("lr", owner, lr, low=0, low_open=True)
        seed = check_int("seed", owner, seed, low=0)
        show = check_bool("progress", owner, progress)
        if self.coupling == "ot" and self.coupling_scope == "global":
            for x0, x1 in zip(data, data[1:], strict=False):
                check_memory("snapshots", owner, x1, 8.0 * 4 * x0.shape[0] * x1.shape[0])
        self.times = t
        gen = torch.Generator().manual_seed(seed)
        self.nets = _TwinMLP(self.ref.d, self.hidden, self.depth, gen)
        intervals = [
            self._interval(x0, x1, t0, t1)
            for x0, x1, t0, t1 in zip(data, data[1:], t, t[1:], strict=False)
        ]
        sizes = [batch // len(intervals)] * len(intervals)
        sizes[0] += batch - sum(sizes)
        opt = torch.optim.Adam(self.parameters(), lr=lr)
        self.losses = []
        for _ in progress_bar(range(steps), "mvOU-OTFM training", disable=not show):
            parts = [iv.sample(n, gen, self) for iv, n in zip(intervals, sizes, strict=True)]
            t_abs, x_t, v, eps, L = (torch.cat(p) for p in zip(*parts, strict=True))
            loss = self._loss(t_abs, x_t, v, eps, L)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            self.losses.append(float(loss.detach()))
        return self

    def _interval(self, x0: torch.Tensor, x1: torch.Tensor, t0: float, t1: float) -> _Interval:
        ref = self.ref if t1 - t0 == 1.0 else self.ref.scaled(t1 - t0)
        cum = None
        if self.coupling == "ot" and self.coupling_scope == "global":
            plan = sinkhorn_log(_cost(x0, x1, ref), self.reg)
            cum = plan.reshape(-1).cumsum(0)
        return _Interval(ref, x0, x1, t0, t1, cum)

    def _loss(self, t, x_t, v, eps, L) -> torch.Tensor:
        tn = self._tnorm(t)
        x = x_t.float()
        v_hat, s = self.nets(tn, x)
        v_err = v_hat - v.float()
        s_err = (L.float().transpose(-1, -2) @ s.unsqueeze(-1)).squeeze(-1) + eps.float()
        return (v_err**2).sum(1).mean() + self.score_weight * (s_err**2).sum(1).mean()

    # ---------------------------------------------------------------- inference
    def _eval_args(self, owner: str, t: Any, x: Any) -> tuple[torch.Tensor, torch.Tensor]:
        check_tensor("x", owner, x, shape=("B", self.ref.d))
        x = x.to(self.ref.dtype)
        tt = check_times(
            "t", owner, t, x.shape[0], self.ref.dtype, low=self.times[0], high=self.times[-1]
        )
        return tt, x

    def _both(self, t: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.no_grad():
            v, s = self.nets(self._tnorm(t), x.float())
        return v.to(self.ref.dtype), s.to(self.ref.dtype)

    def _velocity(self, t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self._both(t, x)[0]

    def _score(self, t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self._both(t, x)[1]

    def _drift(self, t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        v, s = self._both(t, x)
        return v + 0.5 * s @ self.ref.D.T

    def velocity(self, t: Any, x: torch.Tensor) -> torch.Tensor:
        r"""The learned probability-flow velocity :math:`v_\theta(t, x)`, ``(B, d)``; ``t`` in
        [t_0, t_K] (a number or ``(B,)``)."""
        return self._velocity(*self._eval_args("MvOUOTFM.velocity", t, x))

    def score(self, t: Any, x: torch.Tensor) -> torch.Tensor:
        r"""The learned score :math:`s_\theta(t, x) \approx \nabla\log p_t(x)`, ``(B, d)``."""
        return self._score(*self._eval_args("MvOUOTFM.score", t, x))

    def drift(self, t: Any, x: torch.Tensor) -> torch.Tensor:
        r"""The SB drift :math:`v_\theta + \tfrac12 D s_\theta`, ``(B, d)``."""
        return self._drift(*self._eval_args("MvOUOTFM.drift", t, x))

    def sample(
        self,
        x0: torch.Tensor,
        t_grid: torch.Tensor,
        sde: bool = True,
        generator: torch.Generator | None = None,
        *,
        steps: int = 100,
    ) -> torch.Tensor:
        r"""Paths from ``x0`` ``(N, d)`` at ``t_grid[0]``, recorded at ``t_grid`` (increasing in
        [t_0, t_K]): the SB SDE :math:`dX = (v_\theta + \tfrac12 D s_\theta)dt + \sigma dB`
        (``sde=True``, Euler–Maruyama) or the ODE :math:`dX = v_\theta dt`, about ``steps`` steps
        over the grid's span. Returns ``(N, T, d)`` in the reference's dtype."""
        owner = "MvOUOTFM.sample"
        check_tensor("x0", owner, x0, shape=("N", self.ref.d))
        grid = _increasing("t_grid", owner, t_grid, self.ref.dtype, unit=False)
        check_times(
            "t_grid", owner, grid, None, self.ref.dtype, low=self.times[0], high=self.times[-1]
        )
        sde = check_bool("sde", owner, sde)
        steps = check_steps("steps", owner, steps)
        fn = self._drift if sde else self._velocity
        return euler_maruyama(
            lambda t, x: fn(t.expand(x.shape[0]), x),
            x0.to(self.ref.dtype),
            grid,
            self.ref.sigma if sde else None,
            steps,
            generator,
            owner=owner,
        )


class _Interval:
    """One consecutive snapshot pair: its rescaled reference, samples and plan."""

    def __init__(self, ref, x0, x1, t0, t1, cum):
        self.ref, self.x0, self.x1, self.t0, self.dt, self.cum = ref, x0, x1, t0, t1 - t0, cum

    def pairs(self, n: int, gen: torch.Generator, model: MvOUOTFM):
        n0, n1 = self.x0.shape[0], self.x1.shape[0]
        if model.coupling == "independent":
            return torch.randint(n0, (n,), generator=gen), torch.randint(n1, (n,), generator=gen)
        if model.coupling_scope == "global":
            u = torch.rand(n, generator=gen, dtype=self.cum.dtype) * self.cum[-1]
            flat = torch.searchsorted(self.cum, u).clamp_max(n0 * n1 - 1)
            return flat // n1, flat % n1
        i = torch.randint(n0, (min(MINIBATCH, n0),), generator=gen)
        j = torch.randint(n1, (min(MINIBATCH, n1),), generator=gen)
        plan = sinkhorn_log(_cost(self.x0[i], self.x1[j], self.ref), model.reg)
        flat = torch.multinomial(plan.reshape(-1), n, replacement=True, generator=gen)
        return i[flat // j.numel()], j[flat % j.numel()]

    def sample(self, n: int, gen: torch.Generator, model: MvOUOTFM):
        i, j = self.pairs(n, gen, model)
        dtype = self.ref.dtype
        s = model.t_min + (1 - 2 * model.t_min) * torch.rand(n, generator=gen, dtype=dtype)
        eps = torch.randn(n, self.ref.d, generator=gen, dtype=dtype)
        x_t, v, _, L = self.ref._targets(s, self.x0[i], self.x1[j], eps, exact=False)
        return self.t0 + self.dt * s, x_t, v / self.dt, eps, L


def estimate_drift_matrix(
    model: MvOUOTFM,
    x0: torch.Tensor,
    t_grid: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
    *,
    snapshots: Sequence[torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Least-squares mvOU fit of a learned SB drift :math:`f_\theta = v_\theta + \tfrac12 D
    s_\theta`: regress :math:`f_\theta(t, x)` on :math:`x`, :math:`f \approx A x + c`, and return
    :math:`(A, m)` with :math:`m = -A^{-1}c` (least squares when :math:`A` is singular).

    The points are, by default, the SB generated from ``x0`` ``(N, d)`` on ``t_grid`` (default
    11 points over the fitted times). With ``snapshots`` (one ``(n_k, d)`` tensor per fitted
    time), they are the observed cells at their own times instead, as the authors' released
    repressilator code does (``x0`` and ``t_grid`` are then unused). NaN policy: refused."""
    owner = "estimate_drift_matrix"
    if not isinstance(model, MvOUOTFM):
        raise param_error(
            "model", owner, "an MvOUOTFM", Described(f"a {type(model).__name__}"), cls=TypeError
        )
    check_tensor("x0", owner, x0, shape=("N", model.ref.d))
    dtype, d = model.ref.dtype, model.ref.d
    if snapshots is not None:
        snapshots = _snapshots(owner, snapshots, d, count=len(model.times))
        x = torch.cat([s.to(dtype) for s in snapshots])
        t = torch.cat(
            [
                torch.full((s.shape[0],), tk, dtype=dtype)
                for s, tk in zip(snapshots, model.times, strict=True)
            ]
        )
    else:
        if t_grid is None:
            t_grid = torch.linspace(model.times[0], model.times[-1], 11, dtype=dtype)
        paths = model.sample(x0, t_grid, sde=True, generator=generator)
        N, T, _ = paths.shape
        grid = t_grid.to(dtype)
        t = grid.repeat_interleave(N).reshape(T, N).T.reshape(-1)
        x = paths.reshape(-1, d)
    f = model._drift(t, x)
    design = torch.cat([x, torch.ones(x.shape[0], 1, dtype=x.dtype)], dim=1)
    beta = torch.linalg.lstsq(design, f).solution
    A, c = beta[:d].T, beta[d]
    m = torch.linalg.lstsq(A, -c[:, None]).solution[:, 0]
    return A, m


def fit_iterated(
    snapshots: Sequence[torch.Tensor],
    times: Sequence[float],
    sigma: float | torch.Tensor,
    iterations: int = 3,
    A0: torch.Tensor | None = None,
    m0: torch.Tensor | None = None,
    *,
    estimate_on: str = "generated",
    coupling_scope: str = "global",
    **fit_kwargs: Any,
) -> tuple[MvOUOTFM, list[tuple[MvOUOTFM, torch.Tensor, torch.Tensor]]]:
    r"""Iterated mvOU-OTFM: fit with the reference :math:`(A_0, m_0)` (default :math:`A_0 = 0`,
    i.e. Brownian: SF2M), estimate :math:`(A, m)` from the learned drift
    (:func:`estimate_drift_matrix`: over the SB generated from the first snapshot with
    ``estimate_on="generated"``, or at the observed cells with ``estimate_on="data"``, the
    authors' released code's choice), refit with that reference, and so on,
    ``iterations`` times. Returns the last model and, per iteration, ``(model, A_hat, m_hat)``:
    the model fitted in that iteration and the estimate made from it.
    ``coupling_scope`` goes to :class:`MvOUOTFM`, ``fit_kwargs`` to :meth:`MvOUOTFM.fit`
    (``steps``, ``batch``, ``seed``, ...).
    NaN policy: refused."""
    owner = "fit_iterated"
    iterations = check_int("iterations", owner, iterations, low=1, high=100)
    on = check_choice("estimate_on", owner, estimate_on, ("generated", "data"))
    if not isinstance(snapshots, (list, tuple)) or not snapshots:
        raise param_error(
            "snapshots",
            owner,
            "a non-empty list of (n_k, d) tensors",
            Described(f"a {type(snapshots).__name__}"),
            cls=TypeError,
        )
    check_tensor("snapshots", owner, snapshots[0], ndim=2)
    d = snapshots[0].shape[1]
    A = torch.zeros(d, d, dtype=torch.float64) if A0 is None else A0
    m = m0
    history: list[tuple[MvOUOTFM, torch.Tensor, torch.Tensor]] = []
    model = None
    for it in range(iterations):
        ref = MvOU(A, m, sigma)
        model = MvOUOTFM(ref, coupling_scope=coupling_scope).fit(snapshots, times, **fit_kwargs)
        gen = torch.Generator().manual_seed(it)
        A, m = estimate_drift_matrix(
            model,
            snapshots[0].to(ref.dtype),
            generator=gen,
            snapshots=list(snapshots) if on == "data" else None,
        )
        history.append((model, A, m))
    return model, history
