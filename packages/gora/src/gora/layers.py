"""``GoRALinear``: a frozen ``nn.Linear`` plus a rank-r adapter, the native (peft-free) path.

    y = W x + b + s B (A x),    A: r x in,  B: out x r,  s = alpha / sqrt(r) (rsLoRA) or alpha / r

Only ``A`` and ``B`` are trainable. After GoRA's initialisation everything is vanilla LoRA, and
:meth:`GoRALinear.merge` folds the adapter into a plain ``nn.Linear`` with weight ``W + s B A``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from gora._checks import positive_int
from gora.initialization import kaiming_a, lora_scaling
from paperkit import Described, param_error

__all__ = ["GoRALinear"]


class GoRALinear(nn.Module):
    """A frozen ``base`` linear layer with a low-rank adapter ``s B A``.

    Args:
        base: the pretrained ``nn.Linear`` (kept as ``self.base``, its parameters frozen and
            never modified).
        rank: the adapter rank ``r``.
        alpha: LoRA alpha; ``scaling = alpha / sqrt(r)`` when ``rslora`` else ``alpha / r``.
        A, B: initial factors (r x in, out x r), e.g. from :func:`gora.init_factors`. Default:
            ``A`` kaiming-uniform and ``B = 0`` (plain LoRA: the layer starts equal to ``base``).
        generator: random source of the default ``A``.

    Attributes:
        A, B: the trainable factors (``nn.Parameter``); ``scaling``: the float ``s``.
    """

    def __init__(
        self,
        base: nn.Linear,
        rank: int,
        alpha: float = 16.0,
        *,
        rslora: bool = True,
        A: Tensor | None = None,
        B: Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        owner = "GoRALinear"
        if type(base) is not nn.Linear:
            raise param_error(
                "base", owner, "an nn.Linear", Described(type(base).__name__), cls=TypeError
            )
        rank = positive_int("rank", owner, rank)
        if not (isinstance(alpha, (int, float)) and alpha > 0):
            raise param_error("alpha", owner, "a positive number", alpha)
        out_f, in_f = base.weight.shape
        weight = base.weight
        if A is None:
            A = kaiming_a(rank, in_f, dtype=weight.dtype, generator=generator)
        if B is None:
            B = torch.zeros(out_f, rank, dtype=weight.dtype)
        for name, value, shape in (("A", A, (rank, in_f)), ("B", B, (out_f, rank))):
            if not isinstance(value, Tensor) or tuple(value.shape) != shape:
                got = (
                    Described(f"shape {tuple(value.shape)}") if isinstance(value, Tensor) else value
                )
                raise param_error(name, owner, f"a tensor of shape {shape}", got)
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        self.rank = rank
        self.alpha = float(alpha)
        self.rslora = rslora
        self.scaling = lora_scaling(float(alpha), rank, rslora)
        self.A = nn.Parameter(A.detach().to(weight).clone())
        self.B = nn.Parameter(B.detach().to(weight).clone())

    @property
    def in_features(self) -> int:
        return self.base.in_features

    @property
    def out_features(self) -> int:
        return self.base.out_features

    def delta_weight(self) -> Tensor:
        """The adapter's update ``s B A`` (out x in)."""
        return self.scaling * (self.B @ self.A)

    def forward(self, x: Tensor) -> Tensor:
        """``x[..., in] -> W x + b + s B A x``, shape ``[..., out]``."""
        if x.shape[-1] != self.in_features:
            raise param_error(
                "x",
                "GoRALinear.forward",
                f"a tensor with last dimension {self.in_features}",
                Described(f"shape {tuple(x.shape)}"),
            )
        return self.base(x) + (x @ self.A.T) @ self.B.T * self.scaling

    def merge(self) -> nn.Linear:
        """A new ``nn.Linear`` with weight ``W + s B A`` and the base bias."""
        base = self.base
        merged = nn.Linear(
            self.in_features,
            self.out_features,
            bias=base.bias is not None,
            device=base.weight.device,
            dtype=base.weight.dtype,
        )
        with torch.no_grad():
            merged.weight.copy_(base.weight + self.delta_weight())
            if base.bias is not None:
                merged.bias.copy_(base.bias)
        return merged

    def extra_repr(self) -> str:
        return f"rank={self.rank}, scaling={self.scaling:.4g}"
