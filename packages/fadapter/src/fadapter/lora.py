r"""LoRA baselines (Hu et al., 2022) for the operator network (paper, Sec. 5 baselines).

A frozen weight :math:`W \in \mathbb{R}^{n\times m}` gets a rank-``r`` update
:math:`W + \frac{\alpha}{r} A B` with :math:`A \in \mathbb{R}^{n\times r}` (kaiming-uniform) and
:math:`B \in \mathbb{R}^{r\times m}` zero-initialised, so the model is unchanged at
initialisation. :class:`LoRALinear` does this for ``nn.Linear``; :class:`LoRAAFNO2d` for the
spectral weights of :class:`fadapter.AFNO2d`, each real and imaginary ``c x c·h`` block of
``w1`` and ``w2`` viewed as its own matrix.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from fadapter.fourier import spectral_mix
from fadapter.layers import AFNO2d, check_dtype, check_grid
from paperkit import check_int, check_real, check_tensor, param_error

__all__ = ["LoRAAFNO2d", "LoRALinear"]


def _factors(lead: tuple[int, ...], n: int, m: int, rank: int) -> tuple[nn.Parameter, ...]:
    a = torch.empty(*lead, n, rank)
    flat = a.reshape(-1, n, rank)
    for k in range(flat.shape[0]):
        nn.init.kaiming_uniform_(flat[k], a=math.sqrt(5))
    return nn.Parameter(flat.reshape(a.shape)), nn.Parameter(torch.zeros(*lead, rank, m))


def _check(owner: str, base: nn.Module, kind: type, rank: int, alpha: float) -> tuple[int, float]:
    if not isinstance(base, kind):
        raise param_error("base", owner, f"a {kind.__name__}", type(base).__name__, cls=TypeError)
    rank = check_int("rank", owner, rank, low=1, high=2**16)
    return rank, check_real("alpha", owner, alpha, low=0, low_open=True)


class LoRALinear(nn.Module):
    """``base(x) + (alpha/rank) · x A B`` with ``base`` frozen by :func:`fadapter.apply_peft`.

    Shapes: x (..., in_features) → (..., out_features). NaN policy: as ``nn.Linear``, NaN and
    inf in x propagate (the layer is used inside models whose inputs are checked).
    """

    def __init__(self, base: nn.Linear, rank: int, alpha: float) -> None:
        super().__init__()
        rank, alpha = _check("LoRALinear", base, nn.Linear, rank, alpha)
        self.base, self.rank, self.scaling = base, rank, alpha / rank
        self.lora_a, self.lora_b = _factors((), base.in_features, base.out_features, rank)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tensor("x", "LoRALinear", x, shape=None, finite=False)
        if x.ndim == 0 or x.shape[-1] != self.base.in_features:
            raise param_error(
                "x", "LoRALinear", f"of shape (..., {self.base.in_features})", tuple(x.shape)
            )
        check_dtype("LoRALinear", x, self.base.weight.dtype)
        return self.base(x) + self.scaling * F.linear(F.linear(x, self.lora_a.T), self.lora_b.T)


class LoRAAFNO2d(nn.Module):
    r"""An :class:`AFNO2d` whose ``w1``, ``w2`` get rank-``r`` updates per (real/imag, block):
    :math:`w_\ell[p, k] + \frac{\alpha}{r} A_\ell[p, k] B_\ell[p, k]`, ``p`` in {re, im}.

    Trainable parameters per layer: :math:`2 \cdot nb \cdot r (c + c h) \cdot 2`.
    Shapes: x (B, H, W, width) → same. NaN policy: NaN or inf in x is refused.
    """

    def __init__(self, base: AFNO2d, rank: int, alpha: float) -> None:
        super().__init__()
        rank, alpha = _check("LoRAAFNO2d", base, AFNO2d, rank, alpha)
        self.base, self.rank, self.scaling = base, rank, alpha / rank
        c, h, nb = base.block_size, base.hidden_factor, base.num_blocks
        self.a1, self.b1 = _factors((2, nb), c, c * h, rank)
        self.a2, self.b2 = _factors((2, nb), c * h, c, rank)

    def weights(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        w1, b1, w2, b2 = self.base.weights()
        w1 = w1 + self.scaling * self.a1 @ self.b1
        w2 = w2 + self.scaling * self.a2 @ self.b2
        return w1, b1, w2, b2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        base = self.base
        check_grid(type(self).__name__, x, base.width, base.modes, base.mode_set, base.w1.dtype)
        rows, cols = base.modes_on(x.shape[1], x.device)
        return spectral_mix(x, *self.weights(), rows, cols)
