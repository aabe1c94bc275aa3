r"""2-D incompressible Navier–Stokes in vorticity form on the unit torus (the paper's NS data,
after Li et al., 2020), pseudo-spectral.

.. math::
    \partial_t w + u\cdot\nabla w = \nu \Delta w + f,\qquad
    u = (\partial_y \psi, -\partial_x \psi),\qquad -\Delta\psi = w,

with :math:`f(x, y) = 0.1(\sin 2\pi(x+y) + \cos 2\pi(x+y))` (``forcing="li2020"``). Time
stepping: Crank–Nicolson on the viscous term, Heun's predictor–corrector (2nd order) on the
advection and forcing; the advection term is de-aliased by the 2/3 rule
(:math:`|k_x|, |k_y| \le N/3` kept). Initial vorticity: the Gaussian random field
:math:`\mathcal N(0, 7^{3/2}(-\Delta + 49 I)^{-2.5})` of Li et al. (zero mean).
"""

from __future__ import annotations

import numpy as np

from paperkit import check_array, check_choice, check_int, check_real, param_error

__all__ = ["grf_vorticity", "navier_stokes_2d", "ns_solve", "velocity"]

#: Largest grid side accepted (a (res, res) float64 field per trajectory and step).
MAX_RES = 1024
#: Largest number of solver steps one call may take.
MAX_STEPS = 10**6


def _wavenumbers(res: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer wavenumbers of an rfft2 grid for derivatives: kx (res, 1), ky (1, res//2 + 1),
    the Nyquist wavenumber of an even grid set to 0 (its derivative of a real field is 0)."""
    k = np.fft.fftfreq(res, d=1.0 / res)
    ky = np.arange(res // 2 + 1, dtype=float)
    if res % 2 == 0:
        k[res // 2] = 0.0
        ky[-1] = 0.0
    return k[:, None], ky[None, :]


def _velocity_hat(w_hat: np.ndarray, res: int) -> tuple[np.ndarray, np.ndarray]:
    kx, ky = _wavenumbers(res)
    k = np.fft.fftfreq(res, d=1.0 / res)[:, None]
    lap = 4 * np.pi**2 * (k**2 + np.arange(res // 2 + 1)[None, :] ** 2)
    lap[0, 0] = 1.0
    psi = w_hat / lap  # -Δψ = w
    return 2j * np.pi * ky * psi, -2j * np.pi * kx * psi


def velocity(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The divergence-free velocity :math:`u = \partial_y\psi`, :math:`v = -\partial_x\psi` of a
    vorticity field ``w`` (res, res) on the unit torus (axis 0 is x), by :math:`-\Delta\psi = w`.

    NaN policy: NaN or inf in ``w`` is refused.

    >>> x = np.arange(16) / 16
    >>> u, v = velocity(np.sin(2 * np.pi * x)[:, None] * np.ones((1, 16)))
    >>> bool(np.allclose(u, 0)), bool(np.allclose(v, -np.cos(2 * np.pi * x)[:, None] / (2 * np.pi)))
    (True, True)
    """
    w = check_array("w", "velocity", w, ndim=2, kind="real")
    res = w.shape[0]
    if w.shape[1] != res or res < 2:
        raise param_error("w", "velocity", "a square (res, res) field with res >= 2", w.shape)
    u_h, v_h = _velocity_hat(np.fft.rfft2(w.astype(np.float64)), res)
    return np.fft.irfft2(u_h, s=(res, res)), np.fft.irfft2(v_h, s=(res, res))


def _li_forcing(res: int) -> np.ndarray:
    x = np.arange(res) / res
    s = 2 * np.pi * (x[:, None] + x[None, :])
    return 0.1 * (np.sin(s) + np.cos(s))


def _solve(
    w0: np.ndarray, n_steps: int, dt: float, nu: float, f: np.ndarray | None, every: int
) -> np.ndarray:
    """Batched solver: w0 (n, res, res) → (n, n_steps // every, res, res)."""
    res = w0.shape[-1]
    kx, ky = _wavenumbers(res)
    k = np.fft.fftfreq(res, d=1.0 / res)[:, None]
    lap = 4 * np.pi**2 * (k**2 + np.arange(res // 2 + 1)[None, :] ** 2)
    keep = (np.abs(k) <= res / 3) & (np.arange(res // 2 + 1)[None, :] <= res / 3)
    f_hat = 0.0 if f is None else np.fft.rfft2(f)
    lhs = 1.0 + 0.5 * dt * nu * lap
    rhs = 1.0 - 0.5 * dt * nu * lap

    def tendency(w_hat: np.ndarray) -> np.ndarray:
        u_h, v_h = _velocity_hat(w_hat, res)
        grad = [
            np.fft.irfft2(g, s=(res, res))
            for g in (u_h, v_h, 2j * np.pi * kx * w_hat, 2j * np.pi * ky * w_hat)
        ]
        adv = np.fft.rfft2(grad[0] * grad[2] + grad[1] * grad[3])
        return f_hat - keep * adv

    w_hat = np.fft.rfft2(w0)
    frames = []
    for step in range(1, n_steps + 1):
        n1 = tendency(w_hat)
        pred = (rhs * w_hat + dt * n1) / lhs
        w_hat = (rhs * w_hat + 0.5 * dt * (n1 + tendency(pred))) / lhs
        if step % every == 0:
            frames.append(np.fft.irfft2(w_hat, s=(res, res)))
    return np.stack(frames, axis=1)


def ns_solve(
    w0: np.ndarray,
    t_final: float,
    dt: float,
    nu: float,
    forcing: np.ndarray | None = None,
    record_every: int = 1,
) -> np.ndarray:
    r"""Integrate the vorticity equation from ``w0`` (res, res) to ``t_final``.

    Takes ``round(t_final / dt)`` steps of size ``dt`` and returns the fields after every
    ``record_every`` steps, shape (T, res, res) with ``T = steps // record_every`` (the initial
    field not included). ``forcing``: f on the grid (res, res), or None for unforced flow.
    NaN policy: NaN or inf in ``w0`` or ``forcing`` is refused; a blow-up (non-finite field) is
    an error.

    >>> w = ns_solve(np.zeros((8, 8)), 0.1, 0.01, 1e-3, record_every=5)
    >>> w.shape, float(np.abs(w).max())
    ((2, 8, 8), 0.0)
    """
    owner = "ns_solve"
    w0 = check_array("w0", owner, w0, ndim=2, kind="real")
    res = w0.shape[0]
    if w0.shape[1] != res or res < 4 or res > MAX_RES:
        raise param_error(
            "w0", owner, f"a square (res, res) field, 4 <= res <= {MAX_RES}", w0.shape
        )
    t_final = check_real("t_final", owner, t_final, low=0, low_open=True)
    dt = check_real("dt", owner, dt, low=0, low_open=True, high=t_final)
    nu = check_real("nu", owner, nu, low=0)
    every = check_int("record_every", owner, record_every, low=1)
    n_steps = round(t_final / dt)
    if n_steps > MAX_STEPS:
        raise param_error("dt", owner, f"at least t_final / {MAX_STEPS}", dt)
    if every > n_steps:
        raise param_error("record_every", owner, f"at most the {n_steps} steps", every)
    if forcing is not None:
        forcing = check_array("forcing", owner, forcing, shape=(res, res), kind="real")
    out = _solve(w0[None].astype(np.float64), n_steps, dt, nu, forcing, every)[0]
    if not np.isfinite(out).all():
        raise param_error("dt", owner, "small enough for a stable run (the field blew up)", dt)
    return out


def grf_vorticity(
    n: int, res: int, seed: int = 0, alpha: float = 2.5, tau: float = 7.0
) -> np.ndarray:
    r"""``n`` initial vorticities (n, res, res) from :math:`\mathcal N(0, \sigma^2(-\Delta +
    \tau^2 I)^{-\alpha})`, :math:`\sigma = \tau^{\alpha - 1}` (Li et al., 2020), zero mean.

    NaN policy: NaN or inf ``alpha`` / ``tau`` are refused.
    """
    owner = "grf_vorticity"
    n = check_int("n", owner, n, low=1, high=10**5)
    res = check_int("res", owner, res, low=4, high=MAX_RES)
    seed = check_int("seed", owner, seed, low=0)
    alpha = check_real("alpha", owner, alpha, low=0, low_open=True)
    tau = check_real("tau", owner, tau, low=0, low_open=True)
    k = np.fft.fftfreq(res, d=1.0 / res)
    k2 = k[:, None] ** 2 + k[None, :] ** 2
    sqrt_eig = (
        res**2 * np.sqrt(2.0) * tau ** (alpha - 1) * (4 * np.pi**2 * k2 + tau**2) ** (-alpha / 2)
    )
    sqrt_eig[0, 0] = 0.0
    rng = np.random.default_rng(seed)
    xi = rng.standard_normal((n, res, res)) + 1j * rng.standard_normal((n, res, res))
    return np.fft.ifft2(xi * sqrt_eig).real


def navier_stokes_2d(
    n_traj: int,
    res: int = 32,
    steps: int = 20,
    dt: float = 1e-2,
    record_every: int = 10,
    nu: float = 1e-3,
    forcing: str = "li2020",
    seed: int = 0,
) -> torch.Tensor:  # noqa: F821 - torch is imported lazily
    r"""``n_traj`` vorticity trajectories, float32 tensor (n_traj, steps, res, res).

    Each starts from :func:`grf_vorticity` (seeded by ``seed``) and records ``steps`` frames,
    one every ``record_every`` solver steps of size ``dt`` (frame ``t`` at time
    :math:`(t+1)\cdot` ``record_every`` · ``dt``). ``forcing``: ``"li2020"`` or ``"none"``.
    NaN policy: NaN or inf ``dt`` / ``nu`` are refused; a blow-up is an error.

    >>> navier_stokes_2d(2, res=16, steps=3, record_every=2).shape
    torch.Size([2, 3, 16, 16])
    """
    import torch

    owner = "navier_stokes_2d"
    n_traj = check_int("n_traj", owner, n_traj, low=1, high=10**5)
    res = check_int("res", owner, res, low=4, high=MAX_RES)
    steps = check_int("steps", owner, steps, low=1, high=10**4)
    dt = check_real("dt", owner, dt, low=0, low_open=True, high=1.0)
    every = check_int("record_every", owner, record_every, low=1, high=10**4)
    if steps * every > MAX_STEPS:
        raise param_error("steps", owner, f"at most {MAX_STEPS} solver steps in all", steps)
    nu = check_real("nu", owner, nu, low=0)
    check_choice("forcing", owner, forcing, ("li2020", "none"))
    seed = check_int("seed", owner, seed, low=0)
    from paperkit import check_memory

    check_memory("n_traj", owner, n_traj, 8.0 * n_traj * (steps + 12) * res * res)
    f = _li_forcing(res) if forcing == "li2020" else None
    w = _solve(grf_vorticity(n_traj, res, seed), steps * every, dt, nu, f, every)
    if not np.isfinite(w).all():
        raise param_error("dt", owner, "small enough for a stable run (the field blew up)", dt)
    return torch.from_numpy(w).float()
