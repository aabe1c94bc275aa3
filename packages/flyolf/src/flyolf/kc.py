r"""Kenyon cells: leaky integrate-and-fire with refractoriness, SFA and APL feedback.

With :math:`I_k(t)` the synaptic current of KC :math:`k`, the paper's KC model (Sec. 2) is

.. math::

    \tau_m \dot v_k &= -v_k + I_k - g_{LI} A - a_k, \qquad
        v_k \ge \theta \Rightarrow \text{spike},\ v_k \leftarrow 0,\ \text{held for } t_{ref},\\
    \tau_a \dot a_k &= -a_k, \qquad a_k \leftarrow a_k + g_{SFA} \text{ at each spike of } k,\\
    \tau_A \dot A &= -A + \frac{N_{scale}}{N_{kc}} \sum_k s_k(t),

with spike trains :math:`s_k(t) = \sum \delta(t - t_k^f)`, so each KC spike raises the graded APL
unit :math:`A` by :math:`N_{scale}/(N_{kc}\tau_A)` (:math:`N_{scale} = 100`). Per step of
:math:`\Delta t` the input is held constant and every variable decays by its exact factor
:math:`\alpha_x = e^{-\Delta t/\tau_x}`:
:math:`v \leftarrow \alpha_m v + (1-\alpha_m)(I - g_{LI}A - a)` (exact for a constant drive).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch

from flyolf.config import CircuitConfig, check_config, decay, refractory_steps
from flyolf.surrogate import SLOPE, spike
from paperkit import check_bool, check_memory, check_tensor

__all__ = ["APL_SCALE", "simulate_kc"]

#: :math:`N_{scale}`: the APL input is the KC population spike count scaled by N_scale / N_kc.
APL_SCALE = 100.0


@dataclass
class KCRun:
    """What :func:`run_kc` returns: spike counts over the counting window, and the recordings."""

    counts: torch.Tensor
    spikes: torch.Tensor | None
    v: torch.Tensor | None
    apl: torch.Tensor | None


def run_kc(
    drive: Callable[[int], torch.Tensor],
    steps: int,
    shape: tuple[int, int],
    cfg: CircuitConfig,
    *,
    g_li: float | torch.Tensor,
    g_sfa: float | torch.Tensor,
    count_from: int = 0,
    record: bool = False,
    record_v: bool = False,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str = "cpu",
) -> KCRun:
    """The KC update loop (no argument checks): ``drive(t)`` is the (B, N) current at step t.

    Gains may be tensors that require grad (BPTT through :func:`flyolf.surrogate.spike`, the
    reset and the refractory mask detached). Spikes at steps ``>= count_from`` are counted and,
    with ``record``, returned with the APL trace; ``record_v`` returns the membrane after reset.
    """
    B, N = shape
    alpha_m, alpha_a = decay(cfg.dt, cfg.tau_m), decay(cfg.dt, cfg.tau_a)
    alpha_apl = decay(cfg.dt, cfg.tau_apl)
    apl_jump = APL_SCALE / (N * cfg.tau_apl)
    hold_steps = refractory_steps(cfg)
    zeros = partial(torch.zeros, dtype=dtype, device=device)
    v, a, apl, counts = zeros(B, N), zeros(B, N), zeros(B, 1), zeros(B, N)
    countdown = zeros(B, N)  # refractory steps left; float arithmetic only (fast on CPUs)
    use_li = isinstance(g_li, torch.Tensor) or g_li != 0
    use_sfa = isinstance(g_sfa, torch.Tensor) or g_sfa != 0
    grad = torch.is_grad_enabled()
    free, net, s = zeros(B, N), zeros(B, N), zeros(B, N)
    spikes, vs, apls = [], [], []
    for t in range(steps):
        if grad:  # out of place, for BPTT through the surrogate spike
            free = 1.0 - countdown.clamp(max=1.0)  # 0 while refractory: v held at reset
            net = drive(t) - a - g_li * apl
            v = (alpha_m * v + (1.0 - alpha_m) * net) * free
            s = spike(v - cfg.theta, SLOPE)
            v = v * (1.0 - s.detach())
            a = alpha_a * a + g_sfa * s
            apl = alpha_apl * apl + apl_jump * s.sum(dim=1, keepdim=True)
            counts = counts + s if t >= count_from else counts
        else:  # the same update in place (allocation dominates otherwise)
            torch.clamp(countdown, max=1.0, out=free).neg_().add_(1.0)
            net.copy_(drive(t))
            if use_sfa:
                net.sub_(a)
            if use_li:
                net.sub_(apl, alpha=float(g_li))
            v.mul_(alpha_m).add_(net, alpha=1.0 - alpha_m).mul_(free)
            torch.sub(v, cfg.theta, out=s).sign_().add_(1.0).clamp_(max=1.0)  # 1[v >= theta]
            v.mul_(torch.sub(1.0, s, out=net))
            if use_sfa:
                a.mul_(alpha_a).add_(s, alpha=float(g_sfa))
            if use_li:
                apl.mul_(alpha_apl).add_(s.sum(dim=1, keepdim=True), alpha=apl_jump)
            if t >= count_from:
                counts.add_(s)
        countdown.sub_(1.0).clamp_(min=0.0).add_(s.detach(), alpha=hold_steps)
        if t >= count_from:
            if record:
                spikes.append(s.detach().clone())
                apls.append(apl.detach()[:, 0].clone())
            if record_v:
                vs.append(v.detach().clone())
    return KCRun(
        counts=counts,
        spikes=torch.stack(spikes, dim=1) if record else None,
        v=torch.stack(vs, dim=1) if record_v else None,
        apl=torch.stack(apls, dim=1) if record else None,
    )


def simulate_kc(
    current: torch.Tensor, cfg: CircuitConfig, record_v: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    r"""The KC update alone (LIF + SFA + APL, the module docstring's equations) driven by an
    injected current :math:`I` in units of the threshold.

    Args:
        current: (B, T, N), one current per step, or (B, N), held for ``cfg.steps`` steps.
            N is the number of KCs here (the APL normalises by it; ``cfg.n_kc`` is not used).
        cfg: the constants (``dt``, time constants, ``theta``, ``refractory``, ``g_li``,
            ``g_sfa``).
        record_v: also return the membrane potential after each step (after the reset).

    Returns:
        ``(spikes, v)``: spikes (B, T, N) in {0, 1} of ``current``'s dtype, and v (B, T, N) or
        None. ``v[:, n]`` is the potential at time :math:`(n+1)\Delta t`. Differentiable
        (surrogate gradient) when ``current`` requires grad.

    NaN policy: NaN and inf currents are refused (ValueError).

    >>> cfg = CircuitConfig(steps=50)
    >>> spikes, _ = simulate_kc(torch.full((1, 1), 3.0), cfg)
    >>> int(spikes.sum())  # ISI = 2 ms + ceil(tau_m ln(3/2) / dt) ms = 11 ms
    4
    """
    owner = "simulate_kc"
    check_config(cfg, owner)
    check_tensor("current", owner, current, ndim=(2, 3))
    record_v = check_bool("record_v", owner, record_v)
    B, N = current.shape[0], current.shape[-1]
    steps = current.shape[1] if current.ndim == 3 else cfg.steps
    check_memory("current", owner, current, (2 + record_v) * 4.0 * B * N * steps)
    if current.ndim == 3:
        drive = lambda t: current[:, t]  # noqa: E731 - the step's slice
    else:
        drive = lambda t: current  # noqa: E731 - a constant current
    with torch.set_grad_enabled(torch.is_grad_enabled() and current.requires_grad):
        run = run_kc(
            drive,
            steps,
            (B, N),
            cfg,
            g_li=cfg.g_li,
            g_sfa=cfg.g_sfa,
            record=True,
            record_v=record_v,
            dtype=current.dtype,
            device=current.device,
        )
    return run.spikes, run.v
