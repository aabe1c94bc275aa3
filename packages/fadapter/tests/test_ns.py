from itertools import pairwise

import numpy as np
import torch

from fadapter import navier_stokes_2d, ns_solve, velocity
from fadapter.ns import grf_vorticity


def test_velocity_is_divergence_free():
    w = grf_vorticity(1, 32, seed=3)[0]
    nyq = np.ones((32, 32))
    nyq[16, :] = nyq[:, 16] = 0.0
    w = np.fft.ifft2(np.fft.fft2(w) * nyq).real  # a field without Nyquist modes
    u, v = velocity(w)
    k = np.fft.fftfreq(32, d=1 / 32)
    k[16] = 0.0  # spectral derivative of a real field on an even grid: Nyquist term is 0
    div = 2j * np.pi * (k[:, None] * np.fft.fft2(u) + k[None, :] * np.fft.fft2(v))
    assert np.abs(div).max() < 1e-10
    # and it is the velocity of w: curl u = dv/dx - du/dy = w (zero-mean w)
    curl = np.fft.ifft2(2j * np.pi * (k[:, None] * np.fft.fft2(v) - k[None, :] * np.fft.fft2(u)))
    assert np.abs(curl.real - w).max() < 1e-10 * np.abs(w).max() + 1e-12


def test_unforced_enstrophy_decays_monotonically():
    w0 = grf_vorticity(1, 32, seed=1)[0]
    w = ns_solve(w0, 2.0, 1e-2, 1e-3, forcing=None, record_every=5)
    ens = [float((f**2).mean()) for f in [w0, *w]]
    assert all(b < a for a, b in pairwise(ens))


def test_deterministic_under_seed():
    a = navier_stokes_2d(2, res=16, steps=3, record_every=5, seed=4)
    b = navier_stokes_2d(2, res=16, steps=3, record_every=5, seed=4)
    c = navier_stokes_2d(2, res=16, steps=3, record_every=5, seed=5)
    assert torch.equal(a, b) and not torch.equal(a, c)


def _field(res):
    x = np.arange(res) / res
    X, Y = np.meshgrid(x, x, indexing="ij")
    return (
        np.sin(2 * np.pi * (X + 2 * Y))
        + 0.5 * np.cos(2 * np.pi * 3 * X)
        + 0.3 * np.sin(2 * np.pi * (2 * X - 3 * Y))
        + 0.2 * np.cos(2 * np.pi * 4 * Y)
    )


def test_resolutions_32_and_64_agree_on_low_modes():
    coarse = ns_solve(_field(32), 0.3, 5e-3, 1e-3, forcing=None, record_every=60)[-1]
    fine = ns_solve(_field(64), 0.3, 5e-3, 1e-3, forcing=None, record_every=60)[-1]
    k = np.fft.fftfreq(32, d=1 / 32).astype(int)
    low = [(i, j) for i in k if abs(i) < 8 for j in k if abs(j) < 8]
    fc, ff = np.fft.fft2(coarse) / 32**2, np.fft.fft2(fine) / 64**2
    a = np.array([fc[i % 32, j % 32] for i, j in low])
    b = np.array([ff[i % 64, j % 64] for i, j in low])
    assert np.linalg.norm(a - b) / np.linalg.norm(b) < 1e-2


def test_forced_flow_stays_bounded_at_low_viscosity():
    w = navier_stokes_2d(2, res=32, steps=20, nu=1e-4, seed=0)
    assert torch.isfinite(w).all() and w.abs().max() < 5
