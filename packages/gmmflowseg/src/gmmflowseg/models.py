r"""The segmentation models: GMM+NF CVAE (the paper's) and the baselines on one backbone.

All models share :class:`~gmmflowseg.backbone.UNetBackbone` and
:class:`~gmmflowseg.backbone.Fcomb` and expose

* ``elbo(x, y) -> dict(loss, recon, kl, kl_cat, kl_cont)`` (batch means; ``recon`` is the
  cross-entropy summed over pixels, as in the PU-Net), and
* ``sample(x, n_samples, generator=None) -> (logits (M, B, L, H, W), comps (M, B))``, which runs
  the U-Net and the prior net once and only the Fcomb head per sample.

:class:`GMMFlowSegNet` (Sec. 3 of the paper): a constrained Gaussian-mixture prior
:math:`p(c, z \mid x)` and posterior :math:`q(c, z_0 \mid x, y)`, a normalizing flow on the
posterior, and the loss

.. math::

    \mathcal L = \sum_c \pi_q[c]\, \mathrm{CE}(y, \mathrm{dec}(F, z_c))
    + \beta\, \mathrm{KL}
    - \lambda_{\mathrm{ent}}\, H\big(\tfrac1B \textstyle\sum_b \pi_p^{(b)}\big),

the reconstruction marginalised exactly over the K components (K Fcomb passes, no Gumbel noise).

>>> import torch
>>> net = GMMFlowSegNet(1, 2, base=4, depth=2)
>>> x, y = torch.randn(2, 1, 8, 8), torch.randint(0, 2, (2, 8, 8))
>>> sorted(net.elbo(x, y))
['kl', 'kl_cat', 'kl_cont', 'loss', 'recon']
>>> logits, comps = net.sample(x, 5)
>>> tuple(logits.shape), tuple(comps.shape)
((5, 2, 2, 8, 8), (5, 2))
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from gmmflowseg.backbone import ConvEncoder, Fcomb, UNetBackbone, check_image
from gmmflowseg.flows import make_flow
from gmmflowseg.latent import (
    GMMHead,
    GMMParams,
    diag_normal_kl,
    kl_joint,
    kl_marginal,
    normal_log_prob,
)
from paperkit import (
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    param_error,
)

__all__ = ["DeterministicUNet", "Fcomb", "GMMFlowSegNet", "ProbUNet", "UNetBackbone"]

MAX_SAMPLES = 100_000


def _latent_precision(x: torch.Tensor):
    """Autocast off: the latent path (encoders, heads, flows, KL) runs in the parameters' dtype
    under ``torch.autocast``; the U-Net and Fcomb follow autocast."""
    return torch.autocast(x.device.type, enabled=False)


class _SegModel(nn.Module):
    """What every model shares: the backbone, the argument checks and the pixel-wise CE."""

    def _setup(self, owner: str, in_ch: int, n_classes: int, base: int, depth: int) -> None:
        self.in_ch = check_int("in_ch", owner, in_ch, low=1, high=1024)
        self.n_classes = check_int("n_classes", owner, n_classes, low=2, high=1024)
        self.base = check_int("base", owner, base, low=1, high=1024)
        self.depth = check_int("depth", owner, depth, low=1, high=8)
        self.backbone = UNetBackbone(in_ch, base, depth)

    @property
    def _dtype(self) -> torch.dtype:
        return self.backbone.down[0][0].weight.dtype

    def _check_xy(self, owner: str, x: torch.Tensor, y: torch.Tensor):
        dims: dict = {}
        check_image("x", owner, x, self.in_ch, self.depth, dims)
        check_tensor("y", owner, y, shape=("B", "H", "W"), dims=dims, dtype="int")
        if bool((y < 0).any()) or bool((y >= self.n_classes).any()):
            raise param_error(
                "y",
                owner,
                f"labels in [0, {self.n_classes - 1}] (n_classes={self.n_classes})",
                f"labels in [{int(y.min())}, {int(y.max())}]",
            )
        return x.to(self._dtype), y.long()

    def _check_sample(self, owner: str, x: torch.Tensor, n_samples: int, generator) -> torch.Tensor:
        check_image("x", owner, x, self.in_ch, self.depth, {})
        n_samples = check_int("n_samples", owner, n_samples, low=1, high=MAX_SAMPLES)
        nbytes = 4.0 * n_samples * x.shape[0] * (2 * self.base + self.n_classes) * x[0, 0].numel()
        check_memory("n_samples", owner, n_samples, nbytes)
        if generator is not None and not isinstance(generator, torch.Generator):
            raise param_error(
                "generator", owner, "a torch.Generator or None", generator, cls=TypeError
            )
        return x.to(self._dtype)

    def _onehot_input(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, F.one_hot(y, self.n_classes).permute(0, 3, 1, 2).to(x.dtype)], 1)

    @staticmethod
    def _ce(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Cross-entropy summed over pixels; ``logits`` (..., B, L, H, W), ``y`` (B, H, W)."""
        lead = logits.shape[:-4]
        flat = logits.reshape(-1, *logits.shape[-3:])
        target = y.expand(*lead, *y.shape).reshape(-1, *y.shape[-2:])
        return F.cross_entropy(flat, target, reduction="none").sum((-2, -1)).view(*lead, -1)


class DeterministicUNet(_SegModel):
    """The deterministic U-Net baseline: the backbone and a 1x1 convolution, trained with CE.

    ``sample`` returns the same prediction ``n_samples`` times (component 0).

    NaN policy: NaN or inf in ``x`` is refused.

    Shapes: ``x`` (B, in_ch, H, W), ``y`` (B, H, W) integer labels in ``[0, n_classes)``.
    """

    def __init__(self, in_ch: int, n_classes: int, base: int = 16, depth: int = 3) -> None:
        super().__init__()
        self._setup("DeterministicUNet", in_ch, n_classes, base, depth)
        self.head = nn.Conv2d(base, n_classes, 1)

    def elbo(self, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
        x, y = self._check_xy("DeterministicUNet.elbo", x, y)
        recon = self._ce(self.head(self.backbone(x)), y).mean()
        zero = recon.new_zeros(())
        return {"loss": recon, "recon": recon, "kl": zero, "kl_cat": zero, "kl_cont": zero}

    def sample(self, x: torch.Tensor, n_samples: int, generator: torch.Generator | None = None):
        x = self._check_sample("DeterministicUNet.sample", x, n_samples, generator)
        logits = self.head(self.backbone(x))
        comps = torch.zeros(n_samples, x.shape[0], dtype=torch.long)
        return logits.expand(n_samples, *logits.shape), comps


class ProbUNet(_SegModel):
    r"""The Probabilistic U-Net (Kohl et al. 2018): axis-aligned Gaussian prior
    :math:`N(\mu_p(x), \sigma_p^2(x))` and posterior :math:`N(\mu_q(x,y), \sigma_q^2(x,y))`,
    :math:`\sigma = \exp(\cdot)`, loss :math:`\mathrm{CE} + \beta\,\mathrm{KL}` with the analytic
    KL. ``flow="planar"`` adds a planar posterior flow (cFlow-Net, Selvan et al. 2020); its KL
    is the single-sample estimate :math:`\log q_0(z_0) - \log|\det J| - \log p(z)`.

    NaN policy: NaN or inf in ``x`` is refused.

    Shapes: ``x`` (B, in_ch, H, W), ``y`` (B, H, W) integer labels in ``[0, n_classes)``.
    """

    def __init__(
        self,
        in_ch: int,
        n_classes: int,
        latent_dim: int = 6,
        beta: float = 1.0,
        base: int = 16,
        depth: int = 3,
        flow: str | None = None,
        n_flows: int = 4,
    ) -> None:
        super().__init__()
        owner = "ProbUNet"
        self._setup(owner, in_ch, n_classes, base, depth)
        self.latent_dim = check_int("latent_dim", owner, latent_dim, low=1, high=1024)
        self.beta = check_real("beta", owner, beta, low=0)
        self.flow_kind = check_choice("flow", owner, flow, (None, "planar"))
        n_flows = check_int("n_flows", owner, n_flows, low=1, high=64)
        self.prior_net = ConvEncoder(in_ch, base, depth)
        self.post_net = ConvEncoder(in_ch + n_classes, base, depth)
        E = self.prior_net.out_dim
        self.prior_head = nn.Linear(E, 2 * latent_dim)
        self.post_head = nn.Linear(E, 2 * latent_dim)
        self.flow = None if flow is None else make_flow("planar", latent_dim, n_flows)
        self.fcomb = Fcomb(base, latent_dim, n_classes)

    @staticmethod
    def _gauss(params: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, log_sigma = params.chunk(2, dim=-1)
        return mu, torch.exp(log_sigma)

    def distributions(self, x: torch.Tensor, y: torch.Tensor):
        """``((mu_p, sigma_p), (mu_q, sigma_q))``, each (B, latent_dim)."""
        x, y = self._check_xy("ProbUNet.distributions", x, y)
        with _latent_precision(x):
            return self._gauss(self.prior_head(self.prior_net(x))), self._gauss(
                self.post_head(self.post_net(self._onehot_input(x, y)))
            )

    def elbo(self, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
        x, y = self._check_xy("ProbUNet.elbo", x, y)
        feat = self.backbone(x)
        (mu_p, s_p), (mu_q, s_q) = self.distributions(x, y)
        with _latent_precision(x):
            z0 = mu_q + s_q * torch.randn_like(mu_q)
            if self.flow is None:
                z, kl = z0, diag_normal_kl(mu_q, s_q, mu_p, s_p).sum(-1)
            else:
                z, logdet = self.flow(z0)
                kl = normal_log_prob(z0, mu_q, s_q) - logdet - normal_log_prob(z, mu_p, s_p)
        recon = self._ce(self.fcomb(feat, z), y).mean()
        kl = kl.mean()
        return {
            "loss": recon + self.beta * kl,
            "recon": recon,
            "kl": kl,
            "kl_cat": kl.new_zeros(()),
            "kl_cont": kl,
        }

    def sample(self, x: torch.Tensor, n_samples: int, generator: torch.Generator | None = None):
        x = self._check_sample("ProbUNet.sample", x, n_samples, generator)
        feat_term = self.fcomb.feat_in(self.backbone(x))
        with _latent_precision(x):
            mu, sigma = self._gauss(self.prior_head(self.prior_net(x)))
        eps = torch.randn((n_samples, *mu.shape), generator=generator, dtype=mu.dtype)
        comps = torch.zeros(n_samples, x.shape[0], dtype=torch.long)
        return self.fcomb.decode(feat_term, mu + sigma * eps), comps

    def kl_per_dim(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Analytic KL of posterior from prior per latent dimension (pre-flow), (B, D)."""
        (mu_p, s_p), (mu_q, s_q) = self.distributions(x, y)
        return diag_normal_kl(mu_q, s_q, mu_p, s_p)

    def prior_sigma(self, x: torch.Tensor) -> torch.Tensor:
        """Mean prior standard deviation per image, (B,)."""
        check_image("x", "ProbUNet.prior_sigma", x, self.in_ch, self.depth, {})
        with _latent_precision(x):
            return self._gauss(self.prior_head(self.prior_net(x.to(self._dtype))))[1].mean(-1)


class GMMFlowSegNet(_SegModel):
    r"""GMM+NF CVAE: constrained mixture prior and posterior, posterior flow, exact
    marginalisation of the reconstruction over components (the paper's model, Sec. 3).

    Args:
        flow: ``"planar"``, ``"coupling"`` (conditioned on the posterior code :math:`h_q`) or
            None (the "GMM" baseline).
        constrain: the paper's bounded means and standard deviations (False: the ablation).
        kl: ``"joint"`` (categorical KL + weighted per-component KL, :func:`kl_joint`) or
            ``"marginal"`` (single-sample KL of the marginals, :func:`kl_marginal`).
        lam_ent: weight of :math:`-H(\bar\pi_p)`, the entropy of the batch-mean prior weights
            (keeps every component in use).
        prior_flow: a coupling flow on the prior too, conditioned on :math:`h_p`.

    NaN policy: NaN or inf in ``x`` is refused.

    Shapes: ``x`` (B, in_ch, H, W), ``y`` (B, H, W) integer labels in ``[0, n_classes)``.
    """

    def __init__(
        self,
        in_ch: int,
        n_classes: int,
        latent_dim: int = 6,
        n_components: int = 4,
        flow: str | None = "planar",
        n_flows: int = 4,
        constrain: bool = True,
        beta: float = 1.0,
        base: int = 16,
        depth: int = 3,
        mu_max: float = 2.0,
        sigma_min: float = 0.05,
        sigma_max: float = 0.5,
        kl: str = "joint",
        lam_ent: float = 0.01,
        prior_flow: bool = False,
    ) -> None:
        super().__init__()
        owner = "GMMFlowSegNet"
        self._setup(owner, in_ch, n_classes, base, depth)
        self.latent_dim = check_int("latent_dim", owner, latent_dim, low=1, high=1024)
        self.n_components = check_int("n_components", owner, n_components, low=1, high=256)
        self.flow_kind = check_choice("flow", owner, flow, (None, "planar", "coupling"))
        n_flows = check_int("n_flows", owner, n_flows, low=1, high=64)
        self.constrain = check_bool("constrain", owner, constrain)
        self.beta = check_real("beta", owner, beta, low=0)
        self.kl_kind = check_choice("kl", owner, kl, ("joint", "marginal"))
        self.lam_ent = check_real("lam_ent", owner, lam_ent, low=0)
        check_bool("prior_flow", owner, prior_flow)
        if (flow == "coupling" or prior_flow) and latent_dim < 2:
            raise param_error("latent_dim", owner, "at least 2 for a coupling flow", latent_dim)
        self.prior_net = ConvEncoder(in_ch, base, depth)
        self.post_net = ConvEncoder(in_ch + n_classes, base, depth)
        E = self.prior_net.out_dim
        head = {
            "latent_dim": latent_dim,
            "n_components": n_components,
            "mu_max": mu_max,
            "sigma_min": sigma_min,
            "sigma_max": sigma_max,
            "constrain": constrain,
        }
        try:
            self.prior_head, self.post_head = GMMHead(E, **head), GMMHead(E, **head)
        except (ValueError, TypeError) as exc:  # re-worded for this class, same argument name
            raise type(exc)(str(exc).replace("of GMMHead", f"of {owner}")) from None
        self.flow = None if flow is None else make_flow(flow, latent_dim, n_flows, E)
        self.prior_flow = make_flow("coupling", latent_dim, n_flows, E) if prior_flow else None
        self.fcomb = Fcomb(base, latent_dim, n_classes)

    def prior_params(self, x: torch.Tensor) -> tuple[GMMParams, torch.Tensor]:
        """The prior mixture and the prior code :math:`h_p` (B, E)."""
        check_image("x", "GMMFlowSegNet.prior_params", x, self.in_ch, self.depth, {})
        with _latent_precision(x):
            h_p = self.prior_net(x.to(self._dtype))
            return self.prior_head(h_p), h_p

    def posterior_params(self, x: torch.Tensor, y: torch.Tensor) -> tuple[GMMParams, torch.Tensor]:
        """The posterior mixture (before the flow) and the posterior code :math:`h_q` (B, E)."""
        x, y = self._check_xy("GMMFlowSegNet.posterior_params", x, y)
        with _latent_precision(x):
            h_q = self.post_net(self._onehot_input(x, y))
            return self.post_head(h_q), h_q

    def elbo(self, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
        x, y = self._check_xy("GMMFlowSegNet.elbo", x, y)
        feat_term = self.fcomb.feat_in(self.backbone(x))
        p, h_p = self.prior_params(x)
        q, h_q = self.posterior_params(x, y)
        B, K, D = q.mu.shape
        with _latent_precision(x):
            z = q.mu + q.sigma * torch.randn_like(q.mu)  # one draw per component, (B, K, D)
            if self.flow is not None:
                cond = h_q.repeat_interleave(K, 0)
                z = self.flow(z.reshape(B * K, D), cond)[0].view(B, K, D)
            flows = {"flow": self.flow, "cond": h_q}
            flows.update(prior_flow=self.prior_flow, prior_cond=h_p)
            if self.kl_kind == "joint":
                kl, kl_cat, kl_cont = kl_joint(q, p, **flows)
            else:
                kl = kl_marginal(q, p, **flows)
                kl_cat = kl_joint(q, p)[1]  # the closed-form categorical part, for the record
                kl_cont = kl - kl_cat
            pi_bar = torch.softmax(p.logits, -1).mean(0)
            neg_entropy = (pi_bar * torch.log(pi_bar)).sum()
        ce = self._ce(self.fcomb.decode(feat_term, z.transpose(0, 1)), y).T  # (B, K)
        pi_q = torch.softmax(q.logits, -1)
        recon = (pi_q * ce).sum(-1).mean()
        kl = kl.mean()
        loss = recon + self.beta * kl + self.lam_ent * neg_entropy
        return {
            "loss": loss,
            "recon": recon,
            "kl": kl,
            "kl_cat": kl_cat.mean(),
            "kl_cont": kl_cont.mean(),
        }

    def sample(self, x: torch.Tensor, n_samples: int, generator: torch.Generator | None = None):
        r"""``n_samples`` masks per image: :math:`c \sim \mathrm{Cat}(\pi_p)`,
        :math:`z \sim N(\mu_{pc}, \sigma_{pc}^2)` (through the prior flow if any), decoded by
        Fcomb; returns the logits (M, B, L, H, W) and each sample's component (M, B)."""
        x = self._check_sample("GMMFlowSegNet.sample", x, n_samples, generator)
        feat_term = self.fcomb.feat_in(self.backbone(x))
        p, h_p = self.prior_params(x)
        B = x.shape[0]
        probs = torch.softmax(p.logits, -1)
        comps = torch.multinomial(probs, n_samples, replacement=True, generator=generator).T
        rows = torch.arange(B).expand(n_samples, B)
        eps = torch.randn((n_samples, B, self.latent_dim), generator=generator, dtype=p.mu.dtype)
        z = p.mu[rows, comps] + p.sigma[rows, comps] * eps  # (M, B, D)
        if self.prior_flow is not None:
            cond = h_p.expand(n_samples, *h_p.shape).reshape(-1, h_p.shape[-1])
            with _latent_precision(x):
                z = self.prior_flow(z.reshape(-1, self.latent_dim), cond)[0].view(z.shape)
        return self.fcomb.decode(feat_term, z), comps

    def kl_per_dim(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        r""":math:`\sum_c \pi_q[c]\, \mathrm{KL}(q_c \| p_c)` per latent dimension (closed form,
        before the flow), (B, D)."""
        p, _ = self.prior_params(x)
        q, _ = self.posterior_params(x, y)
        pi_q = torch.softmax(q.logits, -1)
        return (pi_q[..., None] * diag_normal_kl(q.mu, q.sigma, p.mu, p.sigma)).sum(1)

    def prior_sigma(self, x: torch.Tensor) -> torch.Tensor:
        r"""Mean prior standard deviation per image, weighted by :math:`\pi_p`, (B,)."""
        p, _ = self.prior_params(x)
        return (torch.softmax(p.logits, -1) * p.sigma.mean(-1)).sum(-1)
