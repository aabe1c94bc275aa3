"""The KC update alone (simulate_kc): LIF f-I curve, SFA, exact subthreshold integration."""

import math

import numpy as np
import pytest
import torch

from flyolf import CircuitConfig, simulate_kc


def lif_rate(current: float, cfg: CircuitConfig) -> float:
    """Closed form of the LIF f-I curve: 1 / (t_ref + tau_m ln(I / (I - theta))), I > theta."""
    return 1.0 / (cfg.refractory + cfg.tau_m * math.log(current / (current - cfg.theta)))


def spike_times(spikes: torch.Tensor, dt: float) -> np.ndarray:
    return (np.flatnonzero(spikes.numpy()) + 1) * dt


def test_lif_rate_matches_the_closed_form_f_i_curve():
    cfg = CircuitConfig(dt=1e-4, steps=4_000)  # 0.4 s at dt = 0.1 ms
    currents = [1.2, 1.5, 2.0, 3.0, 5.0]
    spikes, _ = simulate_kc(torch.tensor([currents], dtype=torch.float64), cfg)
    for k, current in enumerate(currents):
        isi = np.diff(spike_times(spikes[0, :, k], cfg.dt))
        rate = 1.0 / isi.mean()
        assert rate == pytest.approx(lif_rate(current, cfg), rel=0.03), current


def test_no_spikes_below_threshold():
    cfg = CircuitConfig(dt=1e-4, steps=4_000)
    spikes, _ = simulate_kc(torch.tensor([[0.5, 0.9, 0.999]]), cfg)
    assert spikes.sum() == 0


def sfa_fixed_point(current: float, g: float, cfg: CircuitConfig) -> float:
    """r = f(I - g tau_a r) (mean adaptation current g tau_a r), solved by bisection."""
    lo, hi = 0.0, lif_rate(current, cfg)
    for _ in range(200):
        r = 0.5 * (lo + hi)
        drive = current - g * cfg.tau_a * r
        f = lif_rate(drive, cfg) if drive > cfg.theta else 0.0
        lo, hi = (r, hi) if f > r else (lo, r)
    return 0.5 * (lo + hi)


def test_sfa_slows_firing_to_the_mean_field_rate():
    cfg = CircuitConfig(dt=1e-4, steps=8_000, g_sfa=0.05)
    spikes, _ = simulate_kc(torch.tensor([[3.0]], dtype=torch.float64), cfg)
    isi = np.diff(spike_times(spikes[0, :, 0], cfg.dt))
    assert (np.diff(isi) >= -cfg.dt - 1e-12).all()  # non-decreasing up to one step
    assert isi[-1] > isi[0] + 10 * cfg.dt  # adaptation lengthens the intervals
    assert abs(isi[-1] - isi[-5]) <= cfg.dt + 1e-12  # converged
    expected = sfa_fixed_point(3.0, 0.05, cfg)
    assert expected == pytest.approx(84.6, abs=0.1)  # the value given for I = 3, g = 0.05
    assert 1.0 / isi[-10:].mean() == pytest.approx(expected, rel=0.10)


def test_without_sfa_intervals_are_constant():
    cfg = CircuitConfig(dt=1e-4, steps=2_000)
    spikes, _ = simulate_kc(torch.tensor([[3.0]], dtype=torch.float64), cfg)
    isi = np.diff(spike_times(spikes[0, :, 0], cfg.dt))
    assert isi.max() - isi.min() < 1e-12


def test_subthreshold_step_response_is_the_exponential_charge_curve():
    cfg = CircuitConfig(steps=1)
    onset, steps, level = 10, 150, 0.8
    current = torch.zeros(1, steps, 1, dtype=torch.float64)
    current[:, onset:] = level
    spikes, v = simulate_kc(current, cfg, record_v=True)
    assert spikes.sum() == 0
    n = np.arange(steps)
    t = np.clip(n - onset + 1, 0, None) * cfg.dt  # v[:, n] is the potential at (n + 1) dt
    expected = level * (1.0 - np.exp(-t / cfg.tau_m))
    np.testing.assert_allclose(v[0, :, 0].numpy(), expected, rtol=0, atol=1e-6)


def test_refractory_period_holds_v_at_reset():
    cfg = CircuitConfig(steps=40)
    spikes, v = simulate_kc(torch.full((1, 1), 50.0), cfg, record_v=True)
    first = int(np.flatnonzero(spikes[0, :, 0].numpy())[0])
    hold = round(cfg.refractory / cfg.dt)
    assert (v[0, first : first + hold + 1, 0] == 0).all()
    assert (spikes[0, first + 1 : first + hold + 1, 0] == 0).all()
    assert spikes[0, first + hold + 1, 0] == 1  # a drive of 50 fires at the first free step
