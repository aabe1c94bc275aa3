r"""The mixture latent: the constrained GMM head, the mixture density and the joint KL.

The paper (Sec. 3) replaces the PU-Net's axis-aligned Gaussian by a Gaussian mixture whose
means and standard deviations are bounded, so that latent variance cannot be the source of
sample diversity:

.. math::

    \mu_k = \mu_{\max} \tanh(W_\mu h)_k, \qquad
    \sigma_k = \sigma_{\min} + (\sigma_{\max} - \sigma_{\min})\, \mathrm{sigmoid}(W_\sigma h)_k,
    \qquad \pi = \mathrm{softmax}(W_\pi h).

Both maps saturate, so the bounds hold for every input (no clamp after the fact).

>>> import torch
>>> head = GMMHead(8)
>>> p = head(torch.randn(2, 8) * 1e4)
>>> bool(p.mu.abs().max() <= 2.0), bool(p.sigma.min() >= 0.05), bool(p.sigma.max() <= 0.5)
(True, True, True)
>>> kl, kl_cat, kl_cont = kl_joint(p, p)
>>> float(kl.detach().abs().max())
0.0
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from gmmflowseg.flows import AffineCoupling, FlowSequence, PlanarFlow
from paperkit import check_bool, check_int, check_real, check_tensor, param_error

__all__ = [
    "AffineCoupling",
    "FlowSequence",
    "GMMHead",
    "GMMParams",
    "MixtureLatent",
    "PlanarFlow",
    "diag_normal_kl",
    "kl_joint",
    "kl_marginal",
]

LOG_2PI = math.log(2 * math.pi)


class GMMParams(NamedTuple):
    """Parameters of a batch of K-component diagonal Gaussian mixtures.

    ``logits`` (B, K) (mixture weights ``softmax(logits)``), ``mu`` (B, K, D), ``sigma`` (B, K, D).
    """

    logits: torch.Tensor
    mu: torch.Tensor
    sigma: torch.Tensor


def check_params(name: str, owner: str, params: GMMParams, dims: dict | None = None) -> GMMParams:
    """Refuse anything but finite :class:`GMMParams` with consistent shapes and ``sigma > 0``."""
    if not isinstance(params, GMMParams):
        raise param_error(name, owner, "a GMMParams", type(params).__name__, cls=TypeError)
    dims = {} if dims is None else dims
    for field, shape in (
        ("logits", ("B", "K")),
        ("mu", ("B", "K", "D")),
        ("sigma", ("B", "K", "D")),
    ):
        try:
            check_tensor(name, owner, getattr(params, field), shape=shape, dims=dims)
        except (ValueError, TypeError) as exc:  # say which field of the GMMParams
            raise type(exc)(f"{exc} (field {field!r})") from None
    if not bool((params.sigma > 0).all()):
        raise param_error(name, owner, "GMMParams with sigma > 0", "a sigma with entries <= 0")
    return params


def normal_log_prob(z: torch.Tensor, mu: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """:math:`\\sum_d \\log N(z_d; \\mu_d, \\sigma_d^2)` over the last axis (broadcasting)."""
    return (-0.5 * ((z - mu) / sigma) ** 2 - torch.log(sigma) - 0.5 * LOG_2PI).sum(-1)


def diag_normal_kl(
    mu_q: torch.Tensor, sigma_q: torch.Tensor, mu_p: torch.Tensor, sigma_p: torch.Tensor
) -> torch.Tensor:
    r"""Per-dimension :math:`\mathrm{KL}(N(\mu_q,\sigma_q^2)\,\|\,N(\mu_p,\sigma_p^2))` in closed
    form: :math:`\log\frac{\sigma_p}{\sigma_q} + \frac{\sigma_q^2 + (\mu_q-\mu_p)^2}{2\sigma_p^2}
    - \frac12` (no reduction). NaN policy: propagated (called only by checked entry points).

    >>> diag_normal_kl(*(torch.zeros(1), torch.ones(1)) * 2)
    tensor([0.])
    """
    return torch.log(sigma_p / sigma_q) + (sigma_q**2 + (mu_q - mu_p) ** 2) / (2 * sigma_p**2) - 0.5


class GMMHead(nn.Module):
    r"""Linear maps from an encoding ``h`` to a K-component, D-dimensional Gaussian mixture.

    With ``constrain=True`` (the paper's model): :math:`\mu = \mu_{\max}\tanh(\cdot)` and
    :math:`\sigma = \sigma_{\min} + (\sigma_{\max}-\sigma_{\min})\,\mathrm{sigmoid}(\cdot)`, so
    :math:`|\mu| \le \mu_{\max}` and :math:`\sigma \in [\sigma_{\min}, \sigma_{\max}]` for any
    input. With ``constrain=False`` (the ablation): :math:`\mu` linear and
    :math:`\sigma = \exp(\cdot)`, as in the PU-Net.

    NaN policy: NaN or inf in ``h`` is refused.

    Shapes: ``h`` (B, in_dim) -> :class:`GMMParams` (B, K), (B, K, D), (B, K, D).
    """

    def __init__(
        self,
        in_dim: int,
        latent_dim: int = 6,
        n_components: int = 4,
        mu_max: float = 2.0,
        sigma_min: float = 0.05,
        sigma_max: float = 0.5,
        constrain: bool = True,
    ) -> None:
        super().__init__()
        owner = "GMMHead"
        self.in_dim = check_int("in_dim", owner, in_dim, low=1, high=1 << 16)
        self.latent_dim = check_int("latent_dim", owner, latent_dim, low=1, high=1024)
        self.n_components = check_int("n_components", owner, n_components, low=1, high=256)
        self.mu_max = check_real("mu_max", owner, mu_max, low=0, low_open=True)
        self.sigma_min = check_real("sigma_min", owner, sigma_min, low=0, low_open=True)
        self.sigma_max = check_real("sigma_max", owner, sigma_max, low=0, low_open=True)
        if self.sigma_min >= self.sigma_max:
            raise param_error(
                "sigma_min", owner, f"smaller than 'sigma_max' ({self.sigma_max:g})", self.sigma_min
            )
        self.constrain = check_bool("constrain", owner, constrain)
        K, D = self.n_components, self.latent_dim
        self.logits = nn.Linear(in_dim, K)
        self.mu = nn.Linear(in_dim, K * D)
        self.sigma = nn.Linear(in_dim, K * D)

    def forward(self, h: torch.Tensor) -> GMMParams:
        check_tensor("h", "GMMHead", h, shape=("B", self.in_dim))
        h = h.to(self.mu.weight.dtype)
        K, D = self.n_components, self.latent_dim
        mu_raw = self.mu(h).view(-1, K, D)
        s_raw = self.sigma(h).view(-1, K, D)
        if self.constrain:
            mu = self.mu_max * torch.tanh(mu_raw)
            sigma = self.sigma_min + (self.sigma_max - self.sigma_min) * torch.sigmoid(s_raw)
        else:
            mu, sigma = mu_raw, torch.exp(s_raw)
        return GMMParams(self.logits(h), mu, sigma)


class MixtureLatent:
    r"""The mixture :math:`p(z) = \sum_k \pi_k N(z; \mu_k, \mathrm{diag}\,\sigma_k^2)`.

    ``log_prob(z)`` is the log-sum-exp over components; ``rsample`` draws a component
    :math:`c \sim \mathrm{Cat}(\pi)` and :math:`z = \mu_c + \sigma_c \varepsilon`
    (reparameterised in :math:`\mu, \sigma`; the component draw is not differentiable).

    NaN policy: NaN or inf in the parameters or in ``z`` is refused.
    """

    def __init__(self, params: GMMParams) -> None:
        self.params = check_params("params", "MixtureLatent", params)

    def log_prob(self, z: torch.Tensor) -> torch.Tensor:
        """:math:`\\log \\sum_k \\pi_k N(z; \\mu_k, \\sigma_k^2)`; ``z`` (B, D) -> (B,)."""
        p = self.params
        check_tensor("z", "MixtureLatent.log_prob", z, shape=(p.mu.shape[0], p.mu.shape[2]))
        comp = normal_log_prob(z[:, None, :], p.mu, p.sigma)  # (B, K)
        return torch.logsumexp(F.log_softmax(p.logits, -1) + comp, dim=-1)

    def rsample(
        self, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One draw per batch row: ``(z (B, D), comp (B,))``."""
        if generator is not None and not isinstance(generator, torch.Generator):
            raise param_error(
                "generator",
                "MixtureLatent.rsample",
                "a torch.Generator or None",
                generator,
                cls=TypeError,
            )
        p = self.params
        probs = torch.softmax(p.logits.detach(), -1)
        comp = torch.multinomial(probs, 1, generator=generator)[:, 0]
        rows = torch.arange(comp.shape[0])
        eps = torch.randn(p.mu[:, 0].shape, generator=generator, dtype=p.mu.dtype)
        return p.mu[rows, comp] + p.sigma[rows, comp] * eps, comp


def _check_flow(name: str, owner: str, flow, cond, dims: dict) -> None:
    if flow is None:
        return
    if not isinstance(flow, FlowSequence):
        raise param_error(name, owner, "a FlowSequence or None", type(flow).__name__, cls=TypeError)
    if cond is not None:
        check_tensor("cond", owner, cond, shape=("B", None), dims=dims)


def kl_joint(
    q: GMMParams,
    p: GMMParams,
    flow: FlowSequence | None = None,
    cond: torch.Tensor | None = None,
    n_samples: int = 1,
    *,
    prior_flow: FlowSequence | None = None,
    prior_cond: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""The joint KL of the posterior :math:`q(c, z \mid x, y)` from the prior
    :math:`p(c, z \mid x)`.

    By the chain rule it is the categorical KL plus the weighted per-component KLs,

    .. math::

        \mathrm{KL} = \mathrm{KL}(\mathrm{Cat}(\pi_q)\,\|\,\mathrm{Cat}(\pi_p))
        + \sum_c \pi_q[c]\, \mathrm{KL}_c,

        \mathrm{KL}_c = \mathbb E_{z_0 \sim N(\mu_{qc}, \sigma_{qc}^2)}\big[\log N(z_0; \mu_{qc},
        \sigma_{qc}^2) - \log|\det J_f(z_0)| - \log p_c(f(z_0))\big],

    an upper bound of the KL of the marginals that keeps posterior component c aligned with prior
    component c. Without flows :math:`\mathrm{KL}_c` is the closed form of two diagonal
    Gaussians; with a flow it is a mean over ``n_samples`` reparameterised draws per component.
    With a ``prior_flow`` :math:`g`, :math:`\log p_c(z) = \log N(g^{-1}(z); \mu_{pc},
    \sigma_{pc}^2) + \log|\det J_{g^{-1}}(z)|` (coupling layers only).

    NaN policy: NaN or inf in any parameter is refused.

    Shapes: ``q``, ``p`` (B, K), (B, K, D), (B, K, D); ``cond`` (B, E) -> three (B,) tensors
    ``(kl, kl_cat, kl_cont)``.
    """
    owner = "kl_joint"
    dims: dict = {}
    check_params("q", owner, q, dims)
    check_params("p", owner, p, dims)
    _check_flow("flow", owner, flow, cond, dims)
    _check_flow("prior_flow", owner, prior_flow, prior_cond, dims)
    n_samples = check_int("n_samples", owner, n_samples, low=1, high=1 << 20)
    log_pi_q, log_pi_p = F.log_softmax(q.logits, -1), F.log_softmax(p.logits, -1)
    pi_q = log_pi_q.exp()
    kl_cat = (pi_q * (log_pi_q - log_pi_p)).sum(-1)
    if flow is None and prior_flow is None:
        kl_c = diag_normal_kl(q.mu, q.sigma, p.mu, p.sigma).sum(-1)  # (B, K)
    else:
        B, K, D = q.mu.shape
        eps = torch.randn(
            (B, K, n_samples, D), generator=generator, dtype=q.mu.dtype, device=q.mu.device
        )
        z0 = q.mu[:, :, None] + q.sigma[:, :, None] * eps  # (B, K, S, D)
        log_q0 = normal_log_prob(z0, q.mu[:, :, None], q.sigma[:, :, None])
        z, logdet = _push(flow, z0, cond)
        log_p = _prior_log_prob(z, p.mu[:, :, None], p.sigma[:, :, None], prior_flow, prior_cond)
        kl_c = (log_q0 - logdet - log_p).mean(-1)
    kl_cont = (pi_q * kl_c).sum(-1)
    return kl_cat + kl_cont, kl_cat, kl_cont


def _repeat_cond(cond: torch.Tensor | None, shape: torch.Size) -> torch.Tensor | None:
    """``cond`` (B, E) repeated along the sample axes of ``shape`` = (B, ..., D), flattened."""
    if cond is None:
        return None
    extra = shape[1:-1]
    view = cond.view(cond.shape[0], *([1] * len(extra)), cond.shape[-1])
    return view.expand(cond.shape[0], *extra, cond.shape[-1]).reshape(-1, cond.shape[-1])


def _push(flow, z0: torch.Tensor, cond) -> tuple[torch.Tensor, torch.Tensor]:
    """``flow`` applied to ``z0`` (B, ..., D) with ``cond`` (B, E) repeated; identity if None."""
    if flow is None:
        return z0, z0.new_zeros(z0.shape[:-1])
    z, logdet = flow(z0.reshape(-1, z0.shape[-1]), _repeat_cond(cond, z0.shape))
    return z.view(z0.shape), logdet.view(z0.shape[:-1])


def _prior_log_prob(z, mu, sigma, prior_flow, prior_cond) -> torch.Tensor:
    if prior_flow is None:
        return normal_log_prob(z, mu, sigma)
    u, logdet_inv = prior_flow.inverse(
        z.reshape(-1, z.shape[-1]), _repeat_cond(prior_cond, z.shape)
    )
    u = u.view(z.shape)
    return normal_log_prob(u, mu, sigma) + logdet_inv.view(z.shape[:-1])


def kl_marginal(
    q: GMMParams,
    p: GMMParams,
    flow: FlowSequence | None = None,
    cond: torch.Tensor | None = None,
    *,
    prior_flow: FlowSequence | None = None,
    prior_cond: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    r"""Single-sample estimate of the KL of the marginals, :math:`\log q(z) - \log p(z)` with
    :math:`z = f(z_0)`, :math:`(c, z_0) \sim q` and the full mixture densities
    :math:`\log q(z) = \log \sum_k \pi_{qk} N(z_0; \mu_{qk}, \sigma_{qk}^2) - \log|\det J_f(z_0)|`
    (the ``kl="marginal"`` option of :class:`gmmflowseg.models.GMMFlowSegNet`).

    NaN policy: NaN or inf in any parameter is refused. Shapes as :func:`kl_joint`; returns (B,).
    """
    owner = "kl_marginal"
    dims: dict = {}
    check_params("q", owner, q, dims)
    check_params("p", owner, p, dims)
    _check_flow("flow", owner, flow, cond, dims)
    _check_flow("prior_flow", owner, prior_flow, prior_cond, dims)
    z0, _ = MixtureLatent(q).rsample(generator)
    log_q0 = MixtureLatent(q).log_prob(z0)
    z, logdet = _push(flow, z0, cond)
    log_p = torch.logsumexp(
        F.log_softmax(p.logits, -1)
        + _prior_log_prob(z[:, None], p.mu, p.sigma, prior_flow, prior_cond),
        dim=-1,
    )
    return log_q0 - logdet - log_p
