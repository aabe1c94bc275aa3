r"""Normalizing flows on the latent code: planar flows and conditional affine couplings.

A flow :math:`z = f(z_0) = f_L \circ \dots \circ f_1(z_0)` turns the density of :math:`z_0` into

.. math:: \log q(z) = \log q_0(z_0) - \sum_l \log |\det J_{f_l}|,

the change of variables the paper's posterior flow uses (Sec. 3). Every layer returns its exact
log-determinant, so the KL terms of :mod:`gmmflowseg.latent` are unbiased single-sample
estimates.

>>> import torch
>>> flow = FlowSequence([AffineCoupling(6, 4, parity=i % 2) for i in range(4)])
>>> z0, cond = torch.randn(3, 6), torch.randn(3, 4)
>>> z, logdet = flow(z0, cond)
>>> back, inv_logdet = flow.inverse(z, cond)
>>> bool(torch.allclose(back, z0, atol=1e-6)), bool(torch.allclose(inv_logdet, -logdet))
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import check_choice, check_int, check_tensor, param_error

__all__ = ["AffineCoupling", "FlowSequence", "PlanarFlow", "make_flow"]


def _check_input(owner: str, z: torch.Tensor, dim: int, cond, cond_dim: int, dtype) -> None:
    dims: dict = {}
    check_tensor("z", owner, z, shape=("B", dim), dims=dims, dtype=dtype)
    if cond_dim and cond is None:
        raise param_error("cond", owner, f"a tensor of shape (B, {cond_dim})", None, cls=TypeError)
    if cond is not None and cond_dim:
        check_tensor("cond", owner, cond, shape=("B", cond_dim), dims=dims, dtype=z.dtype)


class PlanarFlow(nn.Module):
    r"""Planar flow :math:`f(z) = z + \hat u\, \tanh(w^\top z + b)` (Rezende & Mohamed, 2015).

    Invertibility needs :math:`w^\top \hat u \ge -1`; the fix
    :math:`\hat u = u + (m(w^\top u) - w^\top u)\, w / \|w\|^2` with
    :math:`m(a) = -1 + \mathrm{softplus}(a)` guarantees it. The log-determinant is exact:
    :math:`\log|1 + \hat u^\top \psi(z)|`, :math:`\psi(z) = (1 - \tanh^2(w^\top z + b))\, w`.
    The parameters are global (not amortised); ``cond`` is accepted and ignored so that planar
    and coupling layers share one call. There is no closed-form inverse.

    NaN policy: NaN or inf in ``z`` is refused; ``z`` must have the layer's dtype.

    Shapes: ``z`` (B, dim) -> ``(z', logdet)`` with ``z'`` (B, dim), ``logdet`` (B,).
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = check_int("dim", "PlanarFlow", dim, low=1, high=4096)
        bound = dim**-0.5
        self.u = nn.Parameter(torch.empty(dim).uniform_(-bound, bound))
        self.w = nn.Parameter(torch.empty(dim).uniform_(-bound, bound))
        self.b = nn.Parameter(torch.zeros(()))

    def u_hat(self) -> torch.Tensor:
        """The constrained :math:`\\hat u` (makes :math:`w^\\top \\hat u \\ge -1`)."""
        wu = self.w @ self.u
        m = -1.0 + F.softplus(wu)
        return self.u + (m - wu) * self.w / (self.w @ self.w)

    def forward(
        self, z: torch.Tensor, cond: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        _check_input("PlanarFlow", z, self.dim, None, 0, self.w.dtype)
        u = self.u_hat()
        a = torch.tanh(z @ self.w + self.b)  # (B,)
        psi = (1 - a**2)[:, None] * self.w  # (B, D)
        logdet = torch.log(torch.abs(1 + psi @ u))
        return z + a[:, None] * u, logdet


class AffineCoupling(nn.Module):
    r"""Conditional affine coupling (RealNVP, Dinh et al. 2017) with a tanh-bounded scale.

    The coordinates of one parity (``parity=0``: even indices) pass through unchanged and, with
    the condition ``cond``, predict a scale and a shift for the others:

    .. math:: z'_b = z_b \odot e^{s} + t, \quad s = \tanh(\tilde s(z_a, c)),\ t = t(z_a, c),

    so :math:`\log|\det J| = \sum s` and the inverse is :math:`z_b = (z'_b - t)\, e^{-s}`.
    The last layer starts at zero, so a new coupling is the identity.

    NaN policy: NaN or inf in ``z`` or ``cond`` is refused; both must have the layer's dtype.

    Shapes: ``z`` (B, dim), ``cond`` (B, cond_dim) (None when ``cond_dim=0``)
    -> ``(z', logdet)`` with ``logdet`` (B,).
    """

    def __init__(self, dim: int, cond_dim: int, hidden: int = 64, parity: int = 0) -> None:
        super().__init__()
        owner = "AffineCoupling"
        self.dim = check_int("dim", owner, dim, low=2, high=4096)
        self.cond_dim = check_int("cond_dim", owner, cond_dim, low=0, high=1 << 16)
        hidden = check_int("hidden", owner, hidden, low=1, high=1 << 14)
        self.parity = check_choice("parity", owner, parity, (0, 1))
        keep = torch.arange(dim) % 2 == parity
        self.register_buffer("keep", keep, persistent=False)
        n_a, n_b = int(keep.sum()), int((~keep).sum())
        self.net = nn.Sequential(
            nn.Linear(n_a + self.cond_dim, hidden), nn.Tanh(), nn.Linear(hidden, 2 * n_b)
        )
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)

    def _scale_shift(self, z_a: torch.Tensor, cond: torch.Tensor | None):
        inp = z_a if not self.cond_dim else torch.cat([z_a, cond], dim=-1)
        s, t = self.net(inp).chunk(2, dim=-1)
        return torch.tanh(s), t

    def forward(
        self, z: torch.Tensor, cond: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        _check_input("AffineCoupling", z, self.dim, cond, self.cond_dim, self.net[0].weight.dtype)
        s, t = self._scale_shift(z[:, self.keep], cond)
        out = z.clone()
        out[:, ~self.keep] = z[:, ~self.keep] * torch.exp(s) + t
        return out, s.sum(-1)

    def inverse(
        self, z: torch.Tensor, cond: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The exact inverse and its log-determinant (the negative of the forward one)."""
        _check_input(
            "AffineCoupling.inverse", z, self.dim, cond, self.cond_dim, self.net[0].weight.dtype
        )
        s, t = self._scale_shift(z[:, self.keep], cond)
        out = z.clone()
        out[:, ~self.keep] = (z[:, ~self.keep] - t) * torch.exp(-s)
        return out, -s.sum(-1)


class FlowSequence(nn.Module):
    r"""A composition :math:`f_L \circ \dots \circ f_1` with the summed log-determinant.

    NaN policy: NaN or inf in ``z0`` or ``cond`` is refused (by the first layer).

    Shapes: ``z0`` (B, D), ``cond`` (B, E) or None -> ``(z, logdet)``, ``logdet`` (B,).
    """

    def __init__(self, layers: Sequence[nn.Module]) -> None:
        super().__init__()
        if isinstance(layers, nn.Module) or not isinstance(layers, Sequence):
            raise param_error(
                "layers", "FlowSequence", "a list of flow layers", layers, cls=TypeError
            )
        if not layers or not all(isinstance(f, (PlanarFlow, AffineCoupling)) for f in layers):
            raise param_error(
                "layers", "FlowSequence", "a non-empty list of PlanarFlow/AffineCoupling", layers
            )
        dims = {f.dim for f in layers}
        if len(dims) != 1:
            raise param_error("layers", "FlowSequence", "layers of one dimension", sorted(dims))
        self.dim = dims.pop()
        self.layers = nn.ModuleList(layers)

    @property
    def _dtype(self) -> torch.dtype:
        return next(self.parameters()).dtype

    def forward(
        self, z0: torch.Tensor, cond: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        check_tensor("z0", "FlowSequence", z0, shape=("B", self.dim), dtype=self._dtype)
        z, total = z0, z0.new_zeros(z0.shape[0])
        for layer in self.layers:
            z, logdet = layer(z, cond)
            total = total + logdet
        return z, total

    def inverse(
        self, z: torch.Tensor, cond: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """:math:`f^{-1}(z)` and :math:`\\log|\\det J_{f^{-1}}(z)|` (coupling layers only)."""
        if not all(isinstance(f, AffineCoupling) for f in self.layers):
            raise NotImplementedError("only AffineCoupling layers have a closed-form inverse")
        check_tensor("z", "FlowSequence.inverse", z, shape=("B", self.dim), dtype=self._dtype)
        total = z.new_zeros(z.shape[0])
        for layer in reversed(self.layers):
            z, logdet = layer.inverse(z, cond)
            total = total + logdet
        return z, total


def make_flow(
    kind: str, dim: int, n_flows: int, cond_dim: int = 0, hidden: int = 64
) -> FlowSequence:
    """``n_flows`` planar layers, or couplings with alternating parity conditioned on ``cond_dim``.

    >>> make_flow("coupling", 6, 4, cond_dim=8).layers[1].parity
    1
    """
    owner = "make_flow"
    check_choice("kind", owner, kind, ("planar", "coupling"))
    n_flows = check_int("n_flows", owner, n_flows, low=1, high=64)
    if kind == "planar":
        return FlowSequence([PlanarFlow(dim) for _ in range(n_flows)])
    return FlowSequence(
        [AffineCoupling(dim, cond_dim, hidden=hidden, parity=i % 2) for i in range(n_flows)]
    )
