"""A small internal LoRA (Hu et al.): W x + (α/r)·B A x with A gaussian, B zero, base frozen.

GradSPO fine-tunes only LoRA adapters of rank 4 (α = 4, gaussian init of A) on the denoiser's
attention projections; the toy denoiser has no attention, so :func:`add_lora` adapts its linear
layers. At initialisation B = 0, so the adapted model computes exactly the base model.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from paperkit import check_int, check_real, check_tensor, describe, param_error

__all__ = ["LoRALinear", "add_lora"]


class LoRALinear(nn.Module):
    """``base(x) + (alpha / rank) · x Aᵀ Bᵀ``; ``base`` frozen, A ~ N(0, 1/rank), B = 0.

    Shapes: x ``[..., in_features]`` of the base layer's dtype. NaN policy: propagated (as
    ``nn.Linear`` does; a LoRA layer sits inside a network whose entry point checks inputs).

    >>> lin = nn.Linear(3, 2)
    >>> lora = LoRALinear(lin, rank=2)
    >>> x = torch.randn(5, 3)
    >>> bool(torch.equal(lora(x), lin(x)))
    True
    """

    def __init__(self, base: nn.Linear, rank: int = 4, alpha: float | None = None) -> None:
        super().__init__()
        if not isinstance(base, nn.Linear):
            raise param_error("base", "LoRALinear", "an nn.Linear", describe(base), cls=TypeError)
        rank = check_int(
            "rank", "LoRALinear", rank, low=1, high=min(base.in_features, base.out_features)
        )
        alpha = (
            float(rank)
            if alpha is None
            else check_real("alpha", "LoRALinear", alpha, low=0, low_open=True)
        )
        self.base = base.requires_grad_(False)
        self.rank, self.scale = rank, alpha / rank
        w = base.weight
        self.lora_A = nn.Parameter(
            torch.randn(rank, base.in_features, dtype=w.dtype, device=w.device) / math.sqrt(rank)
        )
        self.lora_B = nn.Parameter(
            torch.zeros(base.out_features, rank, dtype=w.dtype, device=w.device)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tensor(
            "x", "LoRALinear", x, dtype=self.base.weight.dtype, finite=False, nonempty=False
        )
        if x.ndim == 0 or x.shape[-1] != self.base.in_features:
            raise param_error(
                "x", "LoRALinear", f"of shape (..., {self.base.in_features})", describe(x)
            )
        return self.base(x) + self.scale * (x @ self.lora_A.T) @ self.lora_B.T


def add_lora(model: nn.Module, rank: int = 4, alpha: float | None = None) -> list[nn.Parameter]:
    """Replace every ``nn.Linear`` of ``model`` whose in and out sizes are both at least ``rank``
    (in place) by a :class:`LoRALinear`, freeze every other parameter, and return the trainable
    LoRA parameters (A and B of each layer). In the toy MLP these are the hidden × hidden layers
    (the input 2 → hidden and output hidden → 2 maps stay frozen).

    NaN policy: not applicable (no tensor input).
    """
    if not isinstance(model, nn.Module):
        raise param_error("model", "add_lora", "an nn.Module", describe(model), cls=TypeError)
    rank = check_int("rank", "add_lora", rank, low=1)
    if alpha is not None:
        alpha = check_real("alpha", "add_lora", alpha, low=0, low_open=True)
    linears = [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Linear) and n]
    if not linears:
        raise param_error("model", "add_lora", "a module with nn.Linear layers", describe(model))
    widest = max(min(m.in_features, m.out_features) for _, m in linears)
    if rank > widest:
        raise param_error("rank", "add_lora", f"an integer in [1, {widest}]", rank)
    linears = [(n, m) for n, m in linears if min(m.in_features, m.out_features) >= rank]
    model.requires_grad_(False)
    for name, lin in linears:
        parent = model.get_submodule(name.rpartition(".")[0]) if "." in name else model
        setattr(parent, name.rpartition(".")[2], LoRALinear(lin, rank, alpha))
    return [p for n, p in model.named_parameters() if "lora_" in n]
