"""``GoRALinear``: a frozen ``nn.Linear`` plus a rank-r adapter, the native (peft-free) path.

    y = W x + b + s B (A x),    A: r x in,  B: out x r,  s = alpha / sqrt(r) (rsLoRA) or alpha / r

Only ``A`` and ``B`` are trainable. After GoRA's initialisation everything is vanilla LoRA, and
:meth:`GoRALinear.merge` folds the adapter into a plain ``nn.Linear`` with weight ``W + s B A``.

Dtypes: the factors are stored in the base layer's dtype (given ``A``, ``B`` are cast to it); the
input ``x`` must already be in that dtype (another dtype is refused with a ``TypeError``, as
``nn.Linear`` refuses it). NaN in ``x`` propagates to the output, as through ``nn.Linear``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from gora.initialization import factor_bytes, generator_arg, random_a, scaling
from paperkit import (
    check_bool,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = ["GoRALinear"]


class GoRALinear(nn.Module):
    """A frozen ``base`` linear layer with a low-rank adapter ``s B A``.

    Args:
        base: the pretrained ``nn.Linear`` (kept as ``self.base``, its parameters frozen and
            never modified).
        rank: the adapter rank ``r``.
        alpha: LoRA alpha (finite, > 0); ``scaling = alpha / sqrt(r)`` when ``rslora`` else
            ``alpha / r``.
        A, B: initial factors (r x in, out x r), e.g. from :func:`gora.init_factors`, floating
            and finite (NaN or inf refused), cast to the base layer's dtype. Default: ``A``
            kaiming-uniform and ``B = 0`` (plain LoRA: the layer starts equal to ``base``).
        generator: random source of the default ``A``.

    Shapes:
        A: ``(r, in)``; B: ``(out, r)``; forward ``x``: ``(..., in)`` -> ``(..., out)``.

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
            raise param_error("base", owner, "an nn.Linear", describe(base), cls=TypeError)
        rank = check_int("rank", owner, rank, low=1)
        alpha = check_real("alpha", owner, alpha, low=0, low_open=True)
        rslora = check_bool("rslora", owner, rslora)
        generator_arg(owner, generator)
        out_f, in_f = base.weight.shape
        weight = base.weight
        check_memory("rank", owner, rank, factor_bytes(out_f, in_f, rank, weight.dtype))
        dims = {"r": (rank, "rank"), "out": (out_f, "base"), "in": (in_f, "base")}
        if A is not None:
            check_tensor("A", owner, A, shape=("r", "in"), dims=dims)
        if B is not None:
            check_tensor("B", owner, B, shape=("out", "r"), dims=dims)
        if A is None:
            A = random_a(rank, in_f, weight.dtype, generator)
        if B is None:
            B = torch.zeros(out_f, rank, dtype=weight.dtype)
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        self.rank = rank
        self.alpha = float(alpha)
        self.rslora = rslora
        self.scaling = scaling(alpha, rank, rslora)
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
        """``x[..., in] -> W x + b + s B A x``, shape ``[..., out]``; ``x`` in the layer's dtype
        and on its device (NaN propagates, as through ``nn.Linear``)."""
        weight = self.base.weight
        owner = "GoRALinear.forward"
        check_tensor(
            "x", owner, x, dtype=weight.dtype, device=weight.device, finite=False, nonempty=False
        )
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise param_error(
                "x",
                owner,
                f"a tensor of shape (..., {self.in_features})",
                describe(x),
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
