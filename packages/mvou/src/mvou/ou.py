r"""The multivariate Ornstein–Uhlenbeck reference process and its Gaussian bridges.

The reference of the paper (its Eq. 1) is

.. math:: dX_t = A (X_t - m)\,dt + \sigma\,dB_t, \qquad D = \sigma\sigma^\top,

with a general (possibly asymmetric) drift matrix :math:`A`, on the time horizon :math:`[0, 1]`.
Its transition law is Gaussian, :math:`X_t \mid X_0 = x \sim N(\mu_t(x), \Sigma_t)` with
:math:`\Phi_t = e^{tA}`, :math:`\mu_t(x) = m + \Phi_t (x - m)` and
:math:`\Sigma_t = \int_0^t e^{sA} D e^{sA^\top} ds`, computed by Van Loan's block exponential

.. math:: \exp\!\Big(t \begin{bmatrix} A & D \\ 0 & -A^\top \end{bmatrix}\Big)
          = \begin{bmatrix} E_{11} & E_{12} \\ 0 & E_{22} \end{bmatrix}, \qquad
          \Phi_t = E_{11},\ \Sigma_t = E_{12} E_{11}^\top .

The bridge pinned at :math:`x_0` (t = 0) and :math:`x_1` (t = 1) is Gaussian by conditioning
(the paper's Theorem 2):
:math:`C_t = \Sigma_t \Phi_{1-t}^\top`, :math:`Q_t = C_t \Sigma_1^{-1}`,
:math:`M_t = \mu_t(x_0) + Q_t (x_1 - \mu_1(x_0))`, :math:`S_t = \Sigma_t - Q_t C_t^\top`.
Its drift (Doob's h-transform, Theorem 1) is
:math:`u_t(x \mid x_1) = A(x - m) + D \Phi_{1-t}^\top \Sigma_{1-t}^{-1}(x_1 - \mu_{1-t}(x))`,
its score :math:`\nabla \log p_t(x \mid x_0, x_1) = -S_t^{-1}(x - M_t)` and its probability-flow
velocity :math:`v_t = u_t + \tfrac12 D S_t^{-1}(x - M_t)`: the flow- and score-matching targets
of mvOU-OTFM. With :math:`A = 0` they are the Brownian-bridge targets of SF2M.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from mvou._checks import points, times
from paperkit import Described, check_bool, check_choice, check_int, check_tensor, param_error

__all__ = ["MvOU"]

#: Points of the cached time grid on [0, 1] (linear interpolation between them).
GRID = 1001


def _sym(S: torch.Tensor) -> torch.Tensor:
    return 0.5 * (S + S.transpose(-1, -2))


def _mv(M: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Batched matrix-vector product: (B, d, d) or (d, d) times (B, d)."""
    return (M @ x.unsqueeze(-1)).squeeze(-1)


class MvOU:
    r"""The mvOU reference :math:`dX = A(X - m)dt + \sigma dB` on :math:`t \in [0, 1]`.

    Args:
        A: drift matrix ``(d, d)``, any real matrix (asymmetric for non-equilibrium forces).
        m: the mean the drift pulls towards, ``(d,)``; ``None`` is the origin.
        sigma: the noise: a positive number (:math:`D = \sigma^2 I`), a ``(d,)`` tensor of
            positive entries (:math:`D = \mathrm{diag}(\sigma^2)`) or a symmetric positive
            semi-definite ``(d, d)`` matrix (:math:`D = \sigma\sigma^\top`; every :math:`D` has
            exactly one such square root, so this loses no generality). The noise must reach every
            direction over [0, 1] (:math:`\Sigma_1` positive definite).
        dtype: ``torch.float64`` (default; the tests' tolerances assume it) or ``torch.float32``.

    NaN policy: NaN and inf are refused in every argument of every method.

    >>> import torch
    >>> ref = MvOU(torch.tensor([[-1.0, 3.0], [-3.0, -1.0]]), sigma=0.5)
    >>> ref.cov(torch.tensor([1.0]))[0].diagonal()  # 0.25 (1 - e^{-2}) / 2 per coordinate
    tensor([0.1081, 0.1081], dtype=torch.float64)
    """

    def __init__(
        self,
        A: torch.Tensor,
        m: torch.Tensor | None = None,
        sigma: float | torch.Tensor = 1.0,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        owner = "MvOU"
        check_choice("dtype", owner, dtype, (torch.float64, torch.float32))
        dims: dict = {}
        check_tensor("A", owner, A, shape=("d", "d"), dims=dims)
        self.dtype = dtype
        self.A = A.detach().to(dtype)
        self.d = d = self.A.shape[0]
        if m is None:
            self.m = torch.zeros(d, dtype=dtype)
        else:
            check_tensor("m", owner, m, shape=("d",), dims=dims)
            self.m = m.detach().to(dtype)
        self.sigma, self.D = self._noise(sigma, d, dtype)
        self._grid: tuple[torch.Tensor, torch.Tensor] | None = None
        phi1, cov1 = self._exact(torch.ones(1, dtype=dtype))
        chol, info = torch.linalg.cholesky_ex(cov1[0])
        if int(info) != 0:
            raise param_error(
                "sigma",
                owner,
                "noise that reaches every direction (Sigma_1 positive definite)",
                Described("a singular Sigma_1"),
            )
        self.phi1, self.cov1, self.chol1 = phi1[0], cov1[0], chol
        self.cov1_inv = torch.cholesky_inverse(chol)

    @staticmethod
    def _noise(sigma: Any, d: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """The noise matrix sigma (d, d) and D = sigma sigma^T."""
        owner = "MvOU"
        if isinstance(sigma, (int, float)) and not isinstance(sigma, bool):
            if not (math.isfinite(sigma) and sigma > 0):
                raise param_error("sigma", owner, "a finite positive number", sigma)
            s = float(sigma) * torch.eye(d, dtype=dtype)
            return s, s @ s
        check_tensor("sigma", owner, sigma, ndim=(0, 1, 2))
        s = sigma.detach().to(dtype)
        if s.ndim == 0:
            if float(s) <= 0:
                raise param_error("sigma", owner, "a finite positive number", float(s))
            s = float(s) * torch.eye(d, dtype=dtype)
        elif s.ndim == 1:
            if s.shape[0] != d or bool((s <= 0).any()):
                raise param_error(
                    "sigma",
                    owner,
                    f"a (d,) tensor of positive entries with d={d}",
                    Described(f"a tensor of shape {tuple(s.shape)}"),
                )
            s = torch.diag(s)
        else:
            if s.shape != (d, d):
                raise param_error(
                    "sigma",
                    owner,
                    f"of shape (d, d) with d={d}",
                    Described(f"a tensor of shape {tuple(s.shape)}"),
                )
            scale = max(float(s.abs().max()), 1e-300)
            asym = float((s - s.T).abs().max()) / scale
            if asym > 1e-10 or float(torch.linalg.eigvalsh(_sym(s)).min()) < -1e-10 * scale:
                raise param_error(
                    "sigma",
                    owner,
                    "a symmetric positive semi-definite matrix",
                    Described("a matrix that is not"),
                )
            s = _sym(s)
        return s, _sym(s @ s.T)

    # ---------------------------------------------------------------- Phi_t and Sigma_t
    def _exact(self, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Phi_t and Sigma_t by one batched Van Loan exponential of (2d, 2d) blocks."""
        d = self.d
        block = torch.zeros(2 * d, 2 * d, dtype=self.dtype)
        block[:d, :d], block[:d, d:], block[d:, d:] = self.A, self.D, -self.A.T
        E = torch.linalg.matrix_exp(t[:, None, None] * block)
        E11, E12 = E[:, :d, :d], E[:, :d, d:]
        return E11, _sym(E12 @ E11.transpose(-1, -2))

    def _cached(self, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Phi_t and Sigma_t interpolated linearly on the cached 1001-point grid."""
        if self._grid is None:
            self._grid = self._exact(torch.linspace(0, 1, GRID, dtype=self.dtype))
        phi, cov = self._grid
        pos = t * (GRID - 1)
        i0 = pos.floor().long().clamp(0, GRID - 2)
        w = (pos - i0.to(self.dtype))[:, None, None]
        return (1 - w) * phi[i0] + w * phi[i0 + 1], (1 - w) * cov[i0] + w * cov[i0 + 1]

    def _phi_cov(self, t: torch.Tensor, exact: bool) -> tuple[torch.Tensor, torch.Tensor]:
        if not exact:
            return self._cached(t)
        unique, index = torch.unique(t, return_inverse=True)  # one matrix_exp per distinct t
        phi, cov = self._exact(unique)
        return phi[index], cov[index]

    def phi(self, t: Any, *, exact: bool = True) -> torch.Tensor:
        r""":math:`\Phi_t = e^{tA}`, ``(B, d, d)`` for times ``t`` in [0, 1] (``(B,)`` or a number).

        ``exact=False`` interpolates the cached 1001-point grid instead of calling matrix_exp.
        """
        check_bool("exact", "MvOU.phi", exact)
        t = times("t", "MvOU.phi", t, None, self.dtype)
        return self._phi_cov(t, exact)[0]

    def cov(self, t: Any, *, exact: bool = True) -> torch.Tensor:
        r""":math:`\Sigma_t = \int_0^t e^{sA} D e^{sA^\top} ds` (Van Loan), ``(B, d, d)``."""
        check_bool("exact", "MvOU.cov", exact)
        t = times("t", "MvOU.cov", t, None, self.dtype)
        return self._phi_cov(t, exact)[1]

    def mean(self, t: torch.Tensor, x: torch.Tensor, phi: torch.Tensor) -> torch.Tensor:
        r""":math:`\mu_t(x) = m + \Phi_t (x - m)` for a given :math:`\Phi_t` (internal)."""
        return self.m + _mv(phi, x - self.m)

    # ---------------------------------------------------------------- transition law
    def transition_logpdf(self, x0: torch.Tensor, x1: torch.Tensor, t: Any) -> torch.Tensor:
        r""":math:`\log N(x_1;\ \mu_t(x_0), \Sigma_t)`, ``(B,)``, for ``t`` in (0, 1]."""
        owner, dims = "MvOU.transition_logpdf", {"d": (self.d, "A")}
        x0 = points("x0", owner, x0, dims, self.dtype)
        x1 = points("x1", owner, x1, dims, self.dtype)
        t = times("t", owner, t, x0.shape[0], self.dtype, low_open=True)
        phi, cov = self._exact(t)
        r = x1 - self.mean(t, x0, phi)
        L = torch.linalg.cholesky(cov)
        z = torch.linalg.solve_triangular(L, r.unsqueeze(-1), upper=False).squeeze(-1)
        logdet = 2 * torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1)
        return -0.5 * (z * z).sum(-1) - 0.5 * logdet - 0.5 * self.d * math.log(2 * math.pi)

    def simulate(
        self,
        x0: torch.Tensor,
        t_grid: torch.Tensor,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        r"""Exact sample paths of the reference at the times ``t_grid``, ``(N, T, d)``.

        Each step draws :math:`X_{t'} = \mu_{t'-t}(X_t) + \Sigma_{t'-t}^{1/2}\xi` from the exact
        transition law (no discretisation error). ``t_grid`` is strictly increasing in [0, 1];
        ``x0`` sits at ``t_grid[0]`` and is the first slice of the output.
        """
        owner = "MvOU.simulate"
        x0 = points("x0", owner, x0, {"d": (self.d, "A")}, self.dtype, axis="N")
        grid = _increasing("t_grid", owner, t_grid, self.dtype)
        if generator is not None and not isinstance(generator, torch.Generator):
            raise param_error(
                "generator", owner, "a torch.Generator or None", Described(type(generator).__name__)
            )
        phi, cov = self._exact(grid.diff())
        out = [x0]
        for k in range(grid.numel() - 1):
            L = torch.linalg.cholesky(cov[k])
            xi = torch.randn(x0.shape, generator=generator, dtype=self.dtype)
            out.append(self.m + (out[-1] - self.m) @ phi[k].T + xi @ L.T)
        return torch.stack(out, dim=1)

    # ---------------------------------------------------------------- bridges
    def _bridge(
        self, t: torch.Tensor, x0: torch.Tensor, x1: torch.Tensor, exact: bool
    ) -> dict[str, torch.Tensor]:
        """Every bridge quantity at times t (no checks)."""
        both = torch.cat([t, 1 - t])
        phi, cov = self._phi_cov(both, exact)
        B = t.shape[0]
        phi_t, cov_t, phi_r, cov_r = phi[:B], cov[:B], phi[B:], cov[B:]
        C = cov_t @ phi_r.transpose(-1, -2)
        Q = C @ self.cov1_inv
        mu_t = self.mean(t, x0, phi_t)
        mu_1 = self.m + (x0 - self.m) @ self.phi1.T
        M = mu_t + _mv(Q, x1 - mu_1)
        S = _sym(cov_t - Q @ C.transpose(-1, -2))
        return {"M": M, "S": S, "phi_r": phi_r, "cov_r": cov_r}

    def bridge(
        self, t: Any, x0: torch.Tensor, x1: torch.Tensor, *, exact: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Mean :math:`M_t` ``(B, d)`` and covariance :math:`S_t` ``(B, d, d)`` of the bridge
        from ``x0`` to ``x1`` at times ``t`` in [0, 1]."""
        owner, dims = "MvOU.bridge", {"d": (self.d, "A")}
        check_bool("exact", owner, exact)
        x0 = points("x0", owner, x0, dims, self.dtype)
        x1 = points("x1", owner, x1, dims, self.dtype)
        t = times("t", owner, t, x0.shape[0], self.dtype)
        b = self._bridge(t, x0, x1, exact)
        return b["M"], b["S"]

    def _drift(
        self, x: torch.Tensor, x1: torch.Tensor, phi_r: torch.Tensor, cov_r: torch.Tensor
    ) -> torch.Tensor:
        r"""u = A(x - m) + D Phi_{1-t}^T Sigma_{1-t}^{-1} (x1 - mu_{1-t}(x))."""
        resid = x1 - self.m - _mv(phi_r, x - self.m)
        pull = _mv(phi_r.transpose(-1, -2), torch.linalg.solve(cov_r, resid))
        return (x - self.m) @ self.A.T + pull @ self.D.T

    def bridge_drift(
        self, t: Any, x: torch.Tensor, x1: torch.Tensor, *, exact: bool = True
    ) -> torch.Tensor:
        r"""The bridge drift :math:`u_t(x \mid x_1)` (Doob's h-transform), ``(B, d)``, for ``t``
        in [0, 1) (at t = 1 the bridge is pinned and the drift is unbounded)."""
        owner, dims = "MvOU.bridge_drift", {"d": (self.d, "A")}
        check_bool("exact", owner, exact)
        x = points("x", owner, x, dims, self.dtype)
        x1 = points("x1", owner, x1, dims, self.dtype)
        t = times("t", owner, t, x.shape[0], self.dtype, high_open=True)
        phi_r, cov_r = self._phi_cov(1 - t, exact)
        return self._drift(x, x1, phi_r, cov_r)

    def bridge_targets(
        self,
        t: Any,
        x0: torch.Tensor,
        x1: torch.Tensor,
        eps: torch.Tensor,
        *,
        exact: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        r"""A bridge sample and its flow- and score-matching targets at ``t`` in (0, 1).

        :math:`x_t = M_t + L_t\varepsilon` with :math:`L_t = \mathrm{chol}(S_t + 10^{-9} I)`;
        ``v_target`` :math:`= u_t(x_t \mid x_1) + \tfrac12 D S_t^{-1}(x_t - M_t)` (probability
        flow of the bridge) and ``score_target`` :math:`= -S_t^{-1}(x_t - M_t)`. Returns
        ``(x_t, v_target, score_target)``, each ``(B, d)``.
        """
        owner, dims = "MvOU.bridge_targets", {"d": (self.d, "A")}
        check_bool("exact", owner, exact)
        x0 = points("x0", owner, x0, dims, self.dtype)
        x1 = points("x1", owner, x1, dims, self.dtype)
        eps = points("eps", owner, eps, dims, self.dtype)
        t = times("t", owner, t, x0.shape[0], self.dtype, low_open=True, high_open=True)
        x_t, v, s, _ = self._targets(t, x0, x1, eps, exact)
        return x_t, v, s

    def _targets(
        self,
        t: torch.Tensor,
        x0: torch.Tensor,
        x1: torch.Tensor,
        eps: torch.Tensor,
        exact: bool,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """x_t, velocity target, score target and L_t (no checks; the trainer's path)."""
        b = self._bridge(t, x0, x1, exact)
        eye = torch.eye(self.d, dtype=self.dtype)
        L = torch.linalg.cholesky(b["S"] + 1e-9 * eye)
        x_t = b["M"] + _mv(L, eps)
        score = -torch.linalg.solve(b["S"], x_t - b["M"])
        v = self._drift(x_t, x1, b["phi_r"], b["cov_r"]) - 0.5 * score @ self.D.T
        return x_t, v, score, L

    def scaled(self, dt: float) -> MvOU:
        r"""The same process seen over a horizon ``dt`` rescaled to [0, 1]: drift
        :math:`\Delta t\,A`, diffusion :math:`\Delta t\,D` (used between snapshots)."""
        from paperkit import check_real

        dt = check_real("dt", "MvOU.scaled", dt, low=0, low_open=True)
        return MvOU(dt * self.A, self.m, math.sqrt(dt) * _sqrtm_psd(self.D), self.dtype)


def _sqrtm_psd(D: torch.Tensor) -> torch.Tensor:
    """The symmetric PSD square root of a symmetric PSD matrix."""
    w, V = torch.linalg.eigh(D)
    return _sym((V * w.clamp_min(0).sqrt()) @ V.T)


def _increasing(
    name: str, owner: str, grid: Any, dtype: torch.dtype, *, unit: bool = True
) -> torch.Tensor:
    """A 1-D tensor of increasing times (in [0, 1] when ``unit``)."""
    check_tensor(name, owner, grid, ndim=1)
    grid = grid.to(dtype)
    if bool((grid.diff() <= 0).any()):
        raise param_error(name, owner, "strictly increasing", Described("a tensor that is not"))
    if unit and bool(((grid < 0) | (grid > 1)).any()):
        raise param_error(
            name,
            owner,
            "times in [0, 1]",
            Described(f"values in [{float(grid.min()):g}, {float(grid.max()):g}]"),
        )
    return grid


def check_steps(name: str, owner: str, steps: Any) -> int:
    """A bounded number of integration steps."""
    return check_int(name, owner, steps, low=1, high=100_000)
