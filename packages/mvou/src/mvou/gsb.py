r"""mvOU-GSB: the exact Schrödinger bridge between Gaussian marginals (the paper's exactly
solvable case, Theorem 3; the bridges of Theorems 1 and 2).

Static problem. With :math:`K = \Sigma_1`, :math:`\bar c = (I - \Phi_1) m` and the change of
variables :math:`y_0 = K^{-1/2}\Phi_1 x_0`, :math:`y_1 = K^{-1/2}(x_1 - \bar c)`, the cost
:math:`\tfrac12 (x_1 - \mu_1(x_0))^\top K^{-1} (\cdot)` becomes :math:`\tfrac12\|y_1 - y_0\|^2`:
the static SB is quadratic entropic OT (:math:`\varepsilon = 1`) between
:math:`N(\tilde a, \tilde A)` and :math:`N(\tilde b, \tilde B)`,
:math:`\tilde A = K^{-1/2}\Phi_1 P_0 \Phi_1^\top K^{-1/2}`,
:math:`\tilde B = K^{-1/2} P_1 K^{-1/2}`.
Its optimal coupling is Gaussian with cross-covariance (Janati et al. 2020, :math:`\sigma^2 = 1`)

.. math:: \tilde C = \tfrac12\big(\tilde A^{1/2}\Delta\tilde A^{-1/2} - I\big),\qquad
          \Delta = \big(4\tilde A^{1/2}\tilde B\tilde A^{1/2} + I\big)^{1/2},

mapped back as :math:`C = \mathrm{Cov}(x_0, x_1) = \Phi_1^{-1} K^{1/2}\tilde C K^{1/2}`.

Dynamic problem. The SB is the mixture of reference bridges over that coupling. With the bridge
mean :math:`M_t = P_t x_0 + Q_t x_1 + r_t`, :math:`P_t = \Phi_t - Q_t\Phi_1`,
:math:`r_t = (I - \Phi_t)m - Q_t(I - \Phi_1)m`, the marginals are Gaussian:

.. math:: \mathrm{mean}_t = P_t a + Q_t b + r_t,\qquad
          \mathrm{Cov}_t = S_t + [P_t\ Q_t]\begin{bmatrix}P_0 & C\\ C^\top & P_1\end{bmatrix}
          [P_t\ Q_t]^\top,

and the drift is affine: :math:`f_t(x) = A(x - m) + D\Phi_{1-t}^\top\Sigma_{1-t}^{-1}
(\mathbb E[X_1 \mid X_t = x] - \mu_{1-t}(x))`, by Gaussian conditioning of :math:`(X_t, X_1)`.
"""

from __future__ import annotations

from typing import Any

import torch

from mvou._checks import times
from mvou.coupling import _check_ref
from mvou.integrate import euler_maruyama
from mvou.ou import MvOU, _increasing, _mv, _sym, check_steps
from paperkit import Described, check_tensor, param_error

__all__ = ["GaussianSB"]


def _sqrtm(S: torch.Tensor, power: float = 0.5) -> torch.Tensor:
    """Power of a symmetric positive definite matrix through its eigendecomposition."""
    w, V = torch.linalg.eigh(_sym(S))
    return _sym((V * w.clamp_min(1e-300) ** power) @ V.T)


def _spd(name: str, owner: str, P: Any, dims: dict, dtype: torch.dtype) -> torch.Tensor:
    check_tensor(name, owner, P, shape=("d", "d"), dims=dims)
    P = P.detach().to(dtype)
    scale = max(float(P.abs().max()), 1e-300)
    if float((P - P.T).abs().max()) > 1e-10 * scale:
        raise param_error(name, owner, "a symmetric matrix", Described("a matrix that is not"))
    if int(torch.linalg.cholesky_ex(_sym(P))[1]) != 0:
        raise param_error(
            name, owner, "a positive definite covariance", Described("a matrix that is not")
        )
    return _sym(P)


class GaussianSB:
    r"""The exact SB between :math:`N(a, P_0)` at t = 0 and :math:`N(b, P_1)` at t = 1 relative
    to the mvOU reference ``ref`` (see the module docstring for the closed forms).

    Args:
        a, b: means ``(d,)``; P0, P1: positive definite covariances ``(d, d)``; ref: an
        :class:`~mvou.MvOU` with :math:`\Phi_1` invertible.

    NaN policy: NaN and inf are refused in every argument.

    >>> import torch
    >>> from mvou import MvOU
    >>> ref = MvOU(torch.tensor([[-1.0, 3.0], [-3.0, -1.0]]), sigma=0.5)
    >>> a, P0 = torch.zeros(2, dtype=torch.float64), torch.eye(2, dtype=torch.float64)
    >>> mean1, cov1 = ref.phi(1.0)[0] @ a, ref.phi(1.0)[0] @ P0 @ ref.phi(1.0)[0].T + ref.cov1
    >>> sb = GaussianSB(a, P0, mean1, cov1, ref)  # target = the reference push-forward
    >>> bool(torch.allclose(sb.cross_cov, P0 @ ref.phi1.T, atol=1e-10))
    True
    """

    def __init__(
        self,
        a: torch.Tensor,
        P0: torch.Tensor,
        b: torch.Tensor,
        P1: torch.Tensor,
        ref: MvOU,
    ) -> None:
        owner = "GaussianSB"
        self.ref = ref = _check_ref(owner, ref)
        dt, dims = ref.dtype, {"d": (ref.d, "ref")}
        check_tensor("a", owner, a, shape=("d",), dims=dims)
        check_tensor("b", owner, b, shape=("d",), dims=dims)
        self.a, self.b = a.detach().to(dt), b.detach().to(dt)
        self.P0 = _spd("P0", owner, P0, dims, dt)
        self.P1 = _spd("P1", owner, P1, dims, dt)
        if torch.linalg.matrix_rank(ref.phi1) < ref.d:  # pragma: no cover - e^{A} is invertible
            raise param_error("ref", owner, "a reference with invertible Phi_1", "a singular one")
        K_half = _sqrtm(ref.cov1)
        K_ihalf = _sqrtm(ref.cov1, -0.5)
        At = _sym(K_ihalf @ ref.phi1 @ self.P0 @ ref.phi1.T @ K_ihalf)
        Bt = _sym(K_ihalf @ self.P1 @ K_ihalf)
        At_half, At_ihalf = _sqrtm(At), _sqrtm(At, -0.5)
        eye = torch.eye(ref.d, dtype=dt)
        delta = _sqrtm(4 * At_half @ Bt @ At_half + eye)
        Ct = 0.5 * (At_half @ delta @ At_ihalf - eye)
        self._cross = torch.linalg.solve(ref.phi1, K_half @ Ct @ K_half)

    @property
    def cross_cov(self) -> torch.Tensor:
        r""":math:`C = \mathrm{Cov}(X_0, X_1)` under the optimal static coupling, ``(d, d)``."""
        return self._cross

    def _moments(self, t: torch.Tensor) -> dict[str, torch.Tensor]:
        ref = self.ref
        both = torch.cat([t, 1 - t])
        phi, cov = ref._exact(both)
        B, eye = t.shape[0], torch.eye(ref.d, dtype=ref.dtype)
        phi_t, cov_t, phi_r, cov_r = phi[:B], cov[:B], phi[B:], cov[B:]
        Cb = cov_t @ phi_r.transpose(-1, -2)
        Q = Cb @ ref.cov1_inv
        P = phi_t - Q @ ref.phi1
        r = _mv(eye - phi_t, ref.m) - _mv(Q, (eye - ref.phi1) @ ref.m)
        S = cov_t - Q @ Cb.transpose(-1, -2)
        Pt, Qt, C = P.transpose(-1, -2), Q.transpose(-1, -2), self._cross
        cov = S + P @ self.P0 @ Pt + P @ C @ Qt + Q @ C.T @ Pt + Q @ self.P1 @ Qt
        mean = _mv(P, self.a) + _mv(Q, self.b) + r
        return {
            "mean": mean,
            "cov": _sym(cov),
            "cross": P @ C + Q @ self.P1,
            "phi_r": phi_r,
            "cov_r": cov_r,
        }

    def marginal(self, t: Any) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Mean and covariance of the SB at ``t`` in [0, 1]: ``(d,)`` and ``(d, d)`` for a
        number, ``(B, d)`` and ``(B, d, d)`` for a ``(B,)`` tensor."""
        scalar = isinstance(t, (int, float)) and not isinstance(t, bool)
        tt = times("t", "GaussianSB.marginal", t, None, self.ref.dtype)
        mo = self._moments(tt)
        return (mo["mean"][0], mo["cov"][0]) if scalar else (mo["mean"], mo["cov"])

    def drift(self, t: Any, x: torch.Tensor) -> torch.Tensor:
        r"""The SB drift :math:`f_t(x)`, ``(B, d)``, at ``t`` in [0, 1) (a number or ``(B,)``)."""
        owner, ref = "GaussianSB.drift", self.ref
        check_tensor("x", owner, x, shape=("B", ref.d))
        x = x.to(ref.dtype)
        tt = times("t", owner, t, x.shape[0], ref.dtype, high_open=True)
        return self._drift(tt, x)

    def _drift(self, t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        mo = self._moments(t)
        gain = torch.linalg.solve(mo["cov"], mo["cross"]).transpose(-1, -2)
        x1_hat = self.b + _mv(gain, x - mo["mean"])
        return self.ref._drift(x, x1_hat, mo["phi_r"], mo["cov_r"])

    def sample(
        self,
        x0: torch.Tensor,
        t_grid: torch.Tensor,
        steps: int = 100,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        r"""Paths of the SB SDE :math:`dX = f_t(X)dt + \sigma dB` from ``x0`` ``(N, d)`` at
        ``t_grid[0]``, recorded at ``t_grid`` (increasing in [0, 1]), by Euler–Maruyama with
        about ``steps`` steps over [t_grid[0], t_grid[-1]]. Returns ``(N, T, d)``."""
        owner, ref = "GaussianSB.sample", self.ref
        check_tensor("x0", owner, x0, shape=("N", ref.d))
        grid = _increasing("t_grid", owner, t_grid, ref.dtype)
        steps = check_steps("steps", owner, steps)
        return euler_maruyama(
            lambda t, x: self._drift(t.expand(x.shape[0]), x),
            x0.to(ref.dtype),
            grid,
            ref.sigma,
            steps,
            generator,
            owner=owner,
        )
