"""The DDIM sampler of the paper's data collection (stepwise sampling), eta = 1.

With the cumulative products ᾱ_t of the training schedule, ``p`` the previous (less noisy)
sampler step and a noise prediction ε:

    x̂0    = (x_t − sqrt(1 − ᾱ_t) ε) / sqrt(ᾱ_t)
    σ_t   = eta · sqrt((1 − ᾱ_p) / (1 − ᾱ_t)) · sqrt(1 − ᾱ_t / ᾱ_p)
    μ_t   = sqrt(ᾱ_p) x̂0 + sqrt(1 − ᾱ_p − σ_t²) ε
    x_p   = μ_t + σ_t z,   z ~ N(0, I)

The grid is diffusers' "leading" spacing (t_i = (S − 1 − i)·⌊T/S⌋), and after the last step
ᾱ_p is 1 (``set_alpha_to_one=True``) or ᾱ_0 (Stable Diffusion 1.5's setting).

Shapes: states and noise predictions are ``[B, D]`` (flatten images to vectors).
"""

from __future__ import annotations

import math

import torch

from paperkit import (
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = ["DDIMScheduler"]

SCHEDULES = ("scaled_linear", "linear", "cosine")


def _betas(kind: str, n: int, beta_start: float, beta_end: float) -> torch.Tensor:
    if kind == "linear":
        return torch.linspace(beta_start, beta_end, n, dtype=torch.float64)
    if kind == "scaled_linear":  # Stable Diffusion's schedule
        return torch.linspace(beta_start**0.5, beta_end**0.5, n, dtype=torch.float64) ** 2

    def abar(u: float) -> float:  # Nichol & Dhariwal's cosine schedule, betas capped at 0.999
        return math.cos((u + 0.008) / 1.008 * math.pi / 2) ** 2

    return torch.tensor(
        [min(1 - abar((i + 1) / n) / abar(i / n), 0.999) for i in range(n)], dtype=torch.float64
    )


class DDIMScheduler:
    """DDIM (Song et al.) with the stochasticity ``eta``; the sampler of GradSPO and SPO.

    Args:
        num_train_steps: T, the length of the training schedule.
        beta_schedule: ``"scaled_linear"`` (SD), ``"linear"`` or ``"cosine"``.
        beta_start, beta_end: the end points of the (scaled) linear schedules.
        set_alpha_to_one: ᾱ after the last step is 1 (else ᾱ_0, as in SD 1.5).

    NaN policy: NaN or inf in any tensor argument is refused with a ValueError.

    >>> s = DDIMScheduler(1000, "linear", beta_start=1e-4, beta_end=0.02)
    >>> s.set_timesteps(20)
    >>> s.timesteps[:3].tolist()
    [950, 900, 850]
    >>> x = torch.randn(4, 2, dtype=torch.float64)
    >>> x_prev, mu, sigma, x0 = s.step(torch.zeros_like(x), 950, x, eta=0.0)
    >>> bool(torch.allclose(x_prev, mu)) and float(sigma.max()) == 0.0
    True
    """

    def __init__(
        self,
        num_train_steps: int = 1000,
        beta_schedule: str = "scaled_linear",
        *,
        beta_start: float = 0.00085,
        beta_end: float = 0.012,
        set_alpha_to_one: bool = True,
    ) -> None:
        owner = "DDIMScheduler"
        self.num_train_steps = check_int("num_train_steps", owner, num_train_steps, low=2)
        self.beta_schedule = check_choice("beta_schedule", owner, beta_schedule, SCHEDULES)
        beta_start = check_real("beta_start", owner, beta_start, low=0, high=1, low_open=True)
        beta_end = check_real("beta_end", owner, beta_end, low=beta_start, high=1, high_open=True)
        check_bool("set_alpha_to_one", owner, set_alpha_to_one)
        self.beta_start, self.beta_end = beta_start, beta_end
        self.set_alpha_to_one = bool(set_alpha_to_one)
        self.betas = _betas(beta_schedule, self.num_train_steps, beta_start, beta_end)
        self.alphas_cumprod = torch.cumprod(1 - self.betas, 0)
        self.final_alpha_cumprod = 1.0 if set_alpha_to_one else float(self.alphas_cumprod[0])
        self.num_inference_steps: int | None = None
        self.timesteps = torch.empty(0, dtype=torch.long)

    def set_timesteps(self, steps: int) -> None:
        """The S-step grid t_i = (S − 1 − i)·⌊T/S⌋, i = 0..S−1 (diffusers' "leading").

        NaN policy: not applicable (an integer, checked)."""
        steps = check_int(
            "steps", "DDIMScheduler.set_timesteps", steps, low=1, high=self.num_train_steps
        )
        self.num_inference_steps = steps
        ratio = self.num_train_steps // steps
        self.timesteps = torch.arange(steps - 1, -1, -1, dtype=torch.long) * ratio

    @property
    def step_ratio(self) -> int:
        """⌊T/S⌋, the distance between grid points."""
        if self.num_inference_steps is None:
            raise ValueError("call DDIMScheduler.set_timesteps(steps) first")
        return self.num_train_steps // self.num_inference_steps

    def alpha_bar(self, t: torch.Tensor) -> torch.Tensor:
        """ᾱ_t for integer timesteps ``t`` (−1 or less: the value after the last step)."""
        t = torch.as_tensor(t, dtype=torch.long)
        out = self.alphas_cumprod[t.clamp(min=0)]
        return torch.where(t >= 0, out, torch.full_like(out, self.final_alpha_cumprod))

    def coefficients(self, t: torch.Tensor, eta: float = 1.0) -> dict[str, torch.Tensor]:
        """ᾱ_t, ᾱ_p, σ_t and b_t = ∂μ/∂ε = −sqrt(ᾱ_p)·sqrt(1−ᾱ_t)/sqrt(ᾱ_t) + sqrt(1−ᾱ_p−σ_t²)
        at timesteps ``t`` (float64)."""
        t = torch.as_tensor(t, dtype=torch.long)
        a_t, a_p = self.alpha_bar(t), self.alpha_bar(t - self.step_ratio)
        var = (1 - a_p) / (1 - a_t) * (1 - a_t / a_p)
        sigma = eta * var.clamp(min=0).sqrt()
        direction = (1 - a_p - sigma**2).clamp(min=0).sqrt()
        b = -(a_p.sqrt()) * (1 - a_t).sqrt() / a_t.sqrt() + direction
        return {
            "alpha_bar": a_t,
            "alpha_bar_prev": a_p,
            "sigma": sigma,
            "b": b,
            "direction": direction,
        }

    def _timestep(self, t: int | torch.Tensor, batch: int, owner: str) -> torch.Tensor:
        high = self.num_train_steps - 1
        if isinstance(t, torch.Tensor):
            check_tensor("t", owner, t, shape=(batch,), dtype="int")
            if bool(((t < 0) | (t > high)).any()):
                raise param_error("t", owner, f"timesteps in [0, {high}]", describe(t))
            return t.long()
        return torch.full((batch,), check_int("t", owner, t, low=0, high=high), dtype=torch.long)

    def step(
        self,
        eps: torch.Tensor,
        t: int | torch.Tensor,
        x_t: torch.Tensor,
        eta: float = 1.0,
        noise: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """One DDIM step from ``x_t`` at timestep ``t`` (int, or LongTensor ``[B]``).

        Returns ``(x_prev, mu, sigma, x0_hat)``: ``x_prev = mu + sigma·noise`` (noise drawn from
        ``generator`` when not given), ``sigma`` of shape ``[B]``. Shapes: eps, x_t, noise [B, D].
        NaN policy: refused.
        """
        owner = "DDIMScheduler.step"
        if self.num_inference_steps is None:
            raise ValueError("call DDIMScheduler.set_timesteps(steps) before step")
        dims: dict = {}
        check_tensor("x_t", owner, x_t, shape=("B", "D"), dims=dims)
        check_tensor("eps", owner, eps, shape=("B", "D"), dims=dims)
        eta = check_real("eta", owner, eta, low=0)
        tt = self._timestep(t, x_t.shape[0], owner)
        if noise is not None:
            check_tensor("noise", owner, noise, shape=("B", "D"), dims=dims)
        if generator is not None and not isinstance(generator, torch.Generator):
            raise param_error(
                "generator", owner, "a torch.Generator or None", describe(generator), cls=TypeError
            )
        c = {k: v.to(x_t.dtype)[:, None] for k, v in self.coefficients(tt, eta).items()}
        x0 = (x_t - (1 - c["alpha_bar"]).sqrt() * eps) / c["alpha_bar"].sqrt()
        mu = c["alpha_bar_prev"].sqrt() * x0 + c["direction"] * eps
        if noise is None:
            noise = torch.randn(x_t.shape, generator=generator, dtype=x_t.dtype)
        sigma = c["sigma"][:, 0]
        return mu + c["sigma"] * noise, mu, sigma, x0

    @staticmethod
    def log_prob(x_prev: torch.Tensor, mu: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
        """Gaussian transition log-density log N(x_prev; mu, σ²I), summed over D; shape ``[B]``.

        ``sigma``: ``[B]``, positive. NaN policy: refused.
        """
        owner = "DDIMScheduler.log_prob"
        dims: dict = {}
        check_tensor("x_prev", owner, x_prev, shape=("B", "D"), dims=dims)
        check_tensor("mu", owner, mu, shape=("B", "D"), dims=dims)
        check_tensor("sigma", owner, sigma, shape=("B",), dims=dims)
        if bool((sigma <= 0).any()):
            raise param_error("sigma", owner, "positive", describe(sigma))
        d = x_prev.shape[1]
        sq = ((x_prev - mu) ** 2).sum(1)
        return -sq / (2 * sigma**2) - d * torch.log(sigma) - 0.5 * d * math.log(2 * math.pi)
