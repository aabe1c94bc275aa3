"""A small pre-LN Transformer encoder over the rows of 8x8 digit images (the reproduction's model).

Tokens: a learned CLS token and the 8 image rows (8 pixels each, linearly embedded), with learned
positions. Each block: ``x + Attn(LN(x))`` then ``x + MLP(LN(x))``; attention has separate
``q``, ``k``, ``v``, ``o`` ``nn.Linear`` layers and the MLP ``fc1``, ``fc2``: the six LoRA targets
per block (:data:`TARGETS`). The classifier ``head`` reads the final CLS state.

Inputs are ``[batch, rows, pixels]`` images in the model's dtype and on its device: another
dtype (e.g. float64 into the float32 model) is refused with a ``TypeError`` rather than cast,
and NaN or inf pixels with a ``ValueError``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from paperkit import check_int, check_memory, check_tensor, param_error

__all__ = ["TARGETS", "DigitsEncoder"]

#: The adapted linear layers of every block (attention and MLP).
TARGETS = ["q", "k", "v", "o", "fc1", "fc2"]


class _Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))

    def forward(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        q, k, v = (
            f(x).view(b, t, self.heads, -1).transpose(1, 2) for f in (self.q, self.k, self.v)
        )
        y = F.scaled_dot_product_attention(q, k, v)
        return self.o(y.transpose(1, 2).reshape(b, t, d))


class _MLP(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class _Block(nn.Module):
    def __init__(self, dim: int, heads: int, hidden: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = _Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = _MLP(dim, hidden)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class DigitsEncoder(nn.Module):
    """Pre-LN Transformer classifier of ``[batch, rows, pixels]`` images.

    Args:
        n_classes: outputs of ``head``.
        dim, heads, layers: width, attention heads (a divisor of ``dim``), blocks; sizes whose
            parameters would not fit in memory are refused before allocating.
        rows, pixels: image rows (tokens) and pixels per row.

    Shapes:
        x: ``(batch, rows, pixels)`` in the model's dtype, finite -> logits ``(batch, n_classes)``.

    >>> DigitsEncoder(n_classes=3, dim=16, heads=2, layers=1)(torch.rand(4, 8, 8)).shape
    torch.Size([4, 3])
    """

    def __init__(
        self,
        n_classes: int = 5,
        dim: int = 64,
        heads: int = 4,
        layers: int = 4,
        rows: int = 8,
        pixels: int = 8,
    ) -> None:
        super().__init__()
        owner = "DigitsEncoder"
        n_classes = check_int("n_classes", owner, n_classes, low=1)
        dim = check_int("dim", owner, dim, low=1)
        heads = check_int("heads", owner, heads, low=1)
        layers = check_int("layers", owner, layers, low=1)
        rows = check_int("rows", owner, rows, low=1)
        pixels = check_int("pixels", owner, pixels, low=1)
        if dim % heads:
            raise param_error("heads", owner, f"a divisor of dim={dim}", heads)
        # float32 parameters: 12 d^2 + 13 d per block (q, k, v, o, fc1, fc2, two LayerNorms),
        # plus the embedding, positions, final norm and head.
        nbytes = 4 * (layers * (12 * dim * dim + 13 * dim) + dim * (pixels + rows + n_classes + 4))
        check_memory("layers" if layers > dim else "dim", owner, max(layers, dim), nbytes)
        self.rows, self.pixels = rows, pixels
        self.embed = nn.Linear(pixels, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(0.02 * torch.randn(1, rows + 1, dim))
        self.blocks = nn.ModuleList(_Block(dim, heads, 4 * dim) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)

    def features(self, x: Tensor) -> Tensor:
        """The final (normalised) CLS state, ``[batch, dim]``."""
        weight = self.embed.weight
        check_tensor(
            "x",
            "DigitsEncoder.forward",
            x,
            shape=("batch", self.rows, self.pixels),
            dtype=weight.dtype,
            device=weight.device,
        )
        h = self.embed(x)
        h = torch.cat([self.cls.expand(len(x), -1, -1), h], dim=1) + self.pos
        for block in self.blocks:
            h = block(h)
        return self.norm(h[:, 0])

    def forward(self, x: Tensor) -> Tensor:
        """Logits ``[batch, n_classes]``."""
        return self.head(self.features(x))
