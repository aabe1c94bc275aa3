r"""The linear form of the ZeroS weights, shared by every linear-time path.

With prefix sums :math:`E_t=\sum_{j\le t}e^{s_j}`, :math:`P_t=\sum_{j\le t}s_j` and the gates of
row :math:`t`, the weight of key :math:`i` is

.. math::
    r_{t,i} = \alpha_t e^{s_i} + \beta_t s_i + \gamma_t,\qquad
    \alpha_t = \frac{\sigma^h_t}{E_t},\quad \beta_t = \frac{\sigma^1_t - \sigma^h_t}{t},\quad
    \gamma_t = -\frac{\beta_t P_t + \sigma^h_t}{t}\;\Big(+\frac{\sigma^0_t}{t}\Big),

so the output needs only the three prefix states :math:`\sum e^{s_i}\hat k_iv_i^\top`,
:math:`\sum s_i\hat k_iv_i^\top`, :math:`\sum\hat k_iv_i^\top`. Non-causal: :math:`t=T`.
"""

from __future__ import annotations

import torch

__all__ = ["coefficients", "positions"]


def positions(T: int, causal: bool, like: torch.Tensor) -> torch.Tensor:
    """The count t of positions row t averages over: 1..T (causal) or T everywhere; (1, T, 1)."""
    if causal:
        return torch.arange(1, T + 1, dtype=like.dtype, device=like.device).view(1, T, 1)
    return torch.full((1, T, 1), float(T), dtype=like.dtype, device=like.device)


def coefficients(
    E: torch.Tensor,
    P: torch.Tensor,
    gate1: torch.Tensor,
    gateh: torch.Tensor,
    gate0: torch.Tensor | None,
    t: torch.Tensor | float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``alpha, beta, gamma`` of :math:`r=\\alpha e^s+\\beta s+\\gamma` (shapes broadcast)."""
    alpha = gateh / E
    beta = (gate1 - gateh) / t
    gamma = -(beta * P + gateh) / t
    if gate0 is not None:
        gamma = gamma + gate0 / t
    return alpha, beta, gamma
