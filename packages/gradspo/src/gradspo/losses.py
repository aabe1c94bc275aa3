"""The three preference losses and their implied per-step weights.

GradSPO (the paper's simplified, guidance-corrected objective). For a stored (x_t, t, c, g_t),
with D the number of dimensions and γ the guidance scale (``gamma``, the code's grad_scale):

    target^±  = ε_ema(x_t) ∓ γ sqrt(1 − ᾱ_t) g_t              (the winner gets "+")
    Q_m^±     = − mean_D (ε_m(x_t) − sg(target^±))²,   m ∈ {θ, ref}
    ρ^±       = clip(exp(Q_θ^± − Q_ref^±), 1 − ε_c, 1 + ε_c)
    L         = − log σ(β log ρ^+ − β log ρ^−)

Unclipped, the logit is −(4βγ sqrt(1 − ᾱ_t)/D)·<ε_θ − ε_ref, g_t>, whatever ε_ema: minimising L
moves ε_θ against g_t, i.e. the sampling mean toward the winner's noise (classifier guidance
with an amortised reward gradient).

SPO: DPO on the Gaussian transition log-likelihoods of the winner and loser candidates,
log p_m(x_±) = −||x_± − μ_m(x_t)||²/(2σ_t²) + const, averaged over D as in SPO's code, ratios
clipped the same way. Its logit is (2β b_t/(σ_t D))·<g_t, ε_θ − ε_ref>, b_t = ∂μ/∂ε.

Diffusion-DPO (Wallace et al.): on final-sample pairs noised to a random t,
L = − log σ(−β/2 · [(e_θ^w − e_ref^w) − (e_θ^l − e_ref^l)]), e = mean_D (ε − ε_pred)².
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from gradspo.scheduler import DDIMScheduler
from paperkit import check_int, check_real, check_tensor, describe, param_error

__all__ = [
    "diffusion_dpo_loss",
    "gradspo_logit",
    "gradspo_loss",
    "implied_step_weights",
    "spo_logit",
    "spo_loss",
]


def _check_pair_args(owner: str, beta: float, clip: float | None) -> tuple[float, float | None]:
    beta = check_real("beta", owner, beta, low=0, low_open=True)
    if clip is not None:
        clip = check_real("clip", owner, clip, low=0, high=1, low_open=True, high_open=True)
    return beta, clip


def _clipped_log_ratio(log_ratio: torch.Tensor, clip: float | None) -> torch.Tensor:
    """log clip(exp(q), 1 − c, 1 + c), computed as clamp(q, log(1 − c), log(1 + c)): the same
    value, and a zero (not 0·inf) gradient where exp(q) would overflow."""
    if clip is None:
        return log_ratio
    return torch.clamp(log_ratio, math.log(1 - clip), math.log(1 + clip))


def gradspo_logit(
    eps_theta: torch.Tensor,
    eps_ref: torch.Tensor,
    eps_ema: torch.Tensor,
    g: torch.Tensor,
    alpha_bar_t: torch.Tensor,
    beta: float = 10.0,
    clip: float | None = 0.1,
    gamma: float = 0.5,
) -> torch.Tensor:
    """β log ρ^+ − β log ρ^− per pair, ``[B]`` (``clip=None``: no clipping).

    Shapes: eps_theta, eps_ref, eps_ema, g ``[B, D]``; alpha_bar_t ``[B]`` in (0, 1].
    NaN policy: refused (ValueError).
    """
    owner = "gradspo_loss"
    dims: dict = {}
    for name, value in (
        ("eps_theta", eps_theta),
        ("eps_ref", eps_ref),
        ("eps_ema", eps_ema),
        ("g", g),
    ):
        check_tensor(name, owner, value, shape=("B", "D"), dims=dims)
    check_tensor("alpha_bar_t", owner, alpha_bar_t, shape=("B",), dims=dims)
    if bool(((alpha_bar_t <= 0) | (alpha_bar_t > 1)).any()):
        raise param_error("alpha_bar_t", owner, "values in (0, 1]", describe(alpha_bar_t))
    beta, clip = _check_pair_args(owner, beta, clip)
    gamma = check_real("gamma", owner, gamma, low=0)
    shift = gamma * (1 - alpha_bar_t.to(g.dtype))[:, None].sqrt() * g
    anchor = eps_ema.detach()
    q = {}
    for sign, target in (("+", anchor - shift), ("-", anchor + shift)):
        q[sign] = -((eps_theta - target) ** 2).mean(1) + ((eps_ref.detach() - target) ** 2).mean(1)
    return beta * (_clipped_log_ratio(q["+"], clip) - _clipped_log_ratio(q["-"], clip))


def gradspo_loss(
    eps_theta: torch.Tensor,
    eps_ref: torch.Tensor,
    eps_ema: torch.Tensor,
    g: torch.Tensor,
    alpha_bar_t: torch.Tensor,
    beta: float = 10.0,
    clip: float | None = 0.1,
    gamma: float = 0.5,
) -> torch.Tensor:
    """The GradSPO loss, − log σ(:func:`gradspo_logit`) averaged over the batch (a 0-d tensor).

    NaN policy: refused (ValueError).

    >>> import torch
    >>> e = torch.randn(4, 2)
    >>> float(gradspo_loss(e, e, e, torch.randn(4, 2), torch.full((4,), 0.5)))  # θ = ref: log 2
    0.6931471824645996
    """
    return -F.logsigmoid(
        gradspo_logit(eps_theta, eps_ref, eps_ema, g, alpha_bar_t, beta, clip, gamma)
    ).mean()


def spo_logit(
    mu_theta: torch.Tensor,
    mu_ref: torch.Tensor,
    x_win: torch.Tensor,
    x_lose: torch.Tensor,
    sigma: torch.Tensor,
    beta: float = 10.0,
    clip: float | None = 0.1,
) -> torch.Tensor:
    """β log ρ^w − β log ρ^l per pair, ``[B]``, with log ρ = mean_D log-likelihood ratio.

    Shapes: mu_theta, mu_ref, x_win, x_lose ``[B, D]``; sigma ``[B]`` positive.
    NaN policy: refused (ValueError).
    """
    owner = "spo_loss"
    dims: dict = {}
    for name, value in (
        ("mu_theta", mu_theta),
        ("mu_ref", mu_ref),
        ("x_win", x_win),
        ("x_lose", x_lose),
    ):
        check_tensor(name, owner, value, shape=("B", "D"), dims=dims)
    check_tensor("sigma", owner, sigma, shape=("B",), dims=dims)
    if bool((sigma <= 0).any()):
        raise param_error("sigma", owner, "positive", describe(sigma))
    beta, clip = _check_pair_args(owner, beta, clip)
    var = 2 * sigma.to(mu_theta.dtype)[:, None] ** 2
    mu_ref = mu_ref.detach()

    def log_ratio(x: torch.Tensor) -> torch.Tensor:
        return (-((x - mu_theta) ** 2) / var + (x - mu_ref) ** 2 / var).mean(1)

    return beta * (
        _clipped_log_ratio(log_ratio(x_win), clip) - _clipped_log_ratio(log_ratio(x_lose), clip)
    )


def spo_loss(
    mu_theta: torch.Tensor,
    mu_ref: torch.Tensor,
    x_win: torch.Tensor,
    x_lose: torch.Tensor,
    sigma: torch.Tensor,
    beta: float = 10.0,
    clip: float | None = 0.1,
) -> torch.Tensor:
    """The SPO loss, − log σ(:func:`spo_logit`) averaged over the batch. NaN policy: refused."""
    return -F.logsigmoid(spo_logit(mu_theta, mu_ref, x_win, x_lose, sigma, beta, clip)).mean()


def diffusion_dpo_loss(
    eps_theta_w: torch.Tensor,
    eps_theta_l: torch.Tensor,
    eps_ref_w: torch.Tensor,
    eps_ref_l: torch.Tensor,
    noise_w: torch.Tensor,
    noise_l: torch.Tensor,
    beta: float = 5000.0,
) -> torch.Tensor:
    """Diffusion-DPO: − log σ(−β/2 [(e_θ^w − e_ref^w) − (e_θ^l − e_ref^l)]), batch mean.

    e = mean_D (noise − ε_pred)² for the noised winner (w) and loser (l). Shapes: all ``[B, D]``.
    NaN policy: refused (ValueError).
    """
    owner = "diffusion_dpo_loss"
    dims: dict = {}
    args = (
        ("eps_theta_w", eps_theta_w),
        ("eps_theta_l", eps_theta_l),
        ("eps_ref_w", eps_ref_w),
        ("eps_ref_l", eps_ref_l),
        ("noise_w", noise_w),
        ("noise_l", noise_l),
    )
    for name, value in args:
        check_tensor(name, owner, value, shape=("B", "D"), dims=dims)
    beta = check_real("beta", owner, beta, low=0, low_open=True)

    def err(pred: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        return ((noise - pred) ** 2).mean(1)

    model_diff = err(eps_theta_w, noise_w) - err(eps_theta_l, noise_l)
    ref_diff = (err(eps_ref_w, noise_w) - err(eps_ref_l, noise_l)).detach()
    return -F.logsigmoid(-0.5 * beta * (model_diff - ref_diff)).mean()


def implied_step_weights(
    scheduler: DDIMScheduler, gamma: float = 0.5, D: int = 2, beta: float = 10.0, eta: float = 1.0
) -> dict[str, np.ndarray]:
    """Per sampler step, the coefficient c_t of <ε_θ − ε_ref, g_t> in each unclipped logit.

    ``gradspo``: 4βγ sqrt(1 − ᾱ_t)/D; ``spo``: 2β |b_t|/(σ_t D) (both the magnitude; the sign
    is negative for both: the logit grows as ε_θ moves against g). Also ``timesteps``, ``sigma``
    and ``b``. The scheduler's grid (``set_timesteps``) is used; steps with σ_t = 0 (no
    stochastic transition, no pair) get ``spo = nan``. NaN policy: not applicable (scalar
    arguments, NaN refused).
    """
    owner = "implied_step_weights"
    if not isinstance(scheduler, DDIMScheduler):
        raise param_error(
            "scheduler", owner, "a gradspo.DDIMScheduler", describe(scheduler), cls=TypeError
        )
    if scheduler.num_inference_steps is None:
        raise param_error("scheduler", owner, "set up with set_timesteps(steps)", "no grid")
    gamma = check_real("gamma", owner, gamma, low=0)
    D = check_int("D", owner, D, low=1)
    beta = check_real("beta", owner, beta, low=0, low_open=True)
    eta = check_real("eta", owner, eta, low=0, low_open=True)
    c = scheduler.coefficients(scheduler.timesteps, eta)
    positive = c["sigma"] > 0
    spo = torch.where(positive, 2 * beta * c["b"].abs() / (c["sigma"] * D + ~positive), torch.nan)
    return {
        "timesteps": scheduler.timesteps.numpy(),
        "gradspo": (4 * beta * gamma * (1 - c["alpha_bar"]).sqrt() / D).numpy(),
        "spo": spo.numpy(),
        "sigma": c["sigma"].numpy(),
        "b": c["b"].numpy(),
    }
