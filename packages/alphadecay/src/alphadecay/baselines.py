r"""The adaptive weight-decay baselines of the paper, as ``torch.optim.AdamW`` subclasses.

``AWDAdamW`` (Ghiasi et al., NeurIPS 2023, "adaptive weight decay"): one global decay that keeps
the ratio of the decay to the loss gradient fixed,

.. math:: \lambda_t = \lambda_{\rm awd} \frac{\lVert \nabla w \rVert}{\lVert w \rVert},\qquad
          \bar\lambda_t = 0.1\, \bar\lambda_{t-1} + 0.9\, \lambda_t

(norms over all parameters with a gradient; :math:`\bar\lambda_0 = 0`), applied as AdamW's
decoupled decay to every group at step :math:`t` (as in the official AlphaDecay code).

``AdaDecayAdamW`` (Nakamura & Hong 2019, "AdaDecay"): a decay per parameter entry from its
gradient magnitude normalised within its tensor (layer),

.. math:: \hat g_i = \frac{|g_i| - \mathrm{mean}(|g|)}{\mathrm{std}(|g|) + 10^{-8}},\qquad
          \lambda_i = \lambda \cdot \frac{2}{1 + e^{-a \hat g_i}}

(:math:`a = 4`), applied decoupled: :math:`w_i \leftarrow (1 - \eta \lambda_i) w_i` before the
Adam update. Entries with larger gradients are decayed more.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch

from alphadecay.optim import adam_hyperparameters, init_optimizer
from paperkit import check_real

__all__ = ["AWDAdamW", "AdaDecayAdamW"]


class AWDAdamW(torch.optim.AdamW):
    r"""AdamW whose decay is the adaptive :math:`\bar\lambda_t` of Ghiasi et al. (2023).

    ``weight_decay`` is :math:`\lambda_{\rm awd}`; ``ema`` the weight of the previous
    :math:`\bar\lambda` (0.1). The current value is ``lambda_bar`` (saved in ``state_dict``).
    Checked at construction: ``lr``, ``betas``, ``eps`` as for AdamW, ``weight_decay`` >= 0,
    ``ema`` in [0, 1), all finite. NaN gradients propagate (into ``lambda_bar`` too), as in
    ``torch.optim.AdamW``.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.1,
        ema: float = 0.1,
    ) -> None:
        owner = "AWDAdamW"
        lr, betas, eps = adam_hyperparameters(owner, lr, betas, eps)
        weight_decay = check_real("weight_decay", owner, weight_decay, low=0)
        ema = check_real("ema", owner, ema, low=0, high=1, high_open=True)
        init_optimizer(
            self, torch.optim.AdamW, owner, params, lr=lr, betas=betas, eps=eps, weight_decay=0.0
        )
        self.lambda_awd = float(weight_decay)
        self.ema = float(ema)
        self.lambda_bar = 0.0

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> Any:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        params = [p for g in self.param_groups for p in g["params"] if p.grad is not None]
        if params:
            grad_sq = sum(float(p.grad.double().square().sum()) for p in params)
            weight_sq = sum(float(p.double().square().sum()) for p in params)
            lam = self.lambda_awd * math.sqrt(grad_sq) / (math.sqrt(weight_sq) + 1e-8)
            self.lambda_bar = self.ema * self.lambda_bar + (1 - self.ema) * lam
            for group in self.param_groups:
                group["weight_decay"] = self.lambda_bar
        super().step()
        return loss

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["awd"] = {"lambda_bar": self.lambda_bar}
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        extra = state_dict.pop("awd", None)
        super().load_state_dict(state_dict)
        if extra is not None:
            self.lambda_bar = float(extra["lambda_bar"])


class AdaDecayAdamW(torch.optim.AdamW):
    r"""AdamW with AdaDecay's per-entry decay :math:`\lambda_i` (Nakamura & Hong 2019).

    ``weight_decay`` is the base :math:`\lambda` of each group; ``sigmoid_scale`` is :math:`a`.
    Checked at construction: ``lr``, ``betas``, ``eps`` as for AdamW, ``weight_decay`` >= 0,
    ``sigmoid_scale`` > 0, all finite. NaN gradients propagate, as in ``torch.optim.AdamW``.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.1,
        sigmoid_scale: float = 4.0,
    ) -> None:
        owner = "AdaDecayAdamW"
        lr, betas, eps = adam_hyperparameters(owner, lr, betas, eps)
        weight_decay = check_real("weight_decay", owner, weight_decay, low=0)
        sigmoid_scale = check_real("sigmoid_scale", owner, sigmoid_scale, low=0, low_open=True)
        init_optimizer(
            self,
            torch.optim.AdamW,
            owner,
            params,
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
        )
        self.sigmoid_scale = float(sigmoid_scale)

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> Any:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        saved = [g["weight_decay"] for g in self.param_groups]
        for group in self.param_groups:
            lam, lr = group["weight_decay"], group["lr"]
            for p in group["params"]:
                if p.grad is None or lam == 0:
                    continue
                mag = p.grad.abs()
                if mag.numel() > 1:
                    z = (mag - mag.mean()) / (mag.std() + 1e-8)
                else:
                    z = torch.zeros_like(mag)
                theta = 2 * torch.sigmoid(self.sigmoid_scale * z)
                p.mul_(1 - lr * lam * theta)
            group["weight_decay"] = 0.0
        try:
            super().step()
        finally:
            for group, lam in zip(self.param_groups, saved, strict=True):
                group["weight_decay"] = lam
        return loss
