"""A small pre-LN Transformer encoder over the rows of 8x8 digit images (the reproduction's model).

Tokens: a learned CLS token and the 8 image rows (8 pixels each, linearly embedded), with learned
positions. Each block: ``x + Attn(LN(x))`` then ``x + MLP(LN(x))``; attention has separate
``q``, ``k``, ``v``, ``o`` ``nn.Linear`` layers and the MLP ``fc1``, ``fc2``: the six LoRA targets
per block (:data:`TARGETS`). The classifier ``head`` reads the final CLS state.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from gora._checks import positive_int
from paperkit import Described, param_error

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
        dim, heads, layers: width, attention heads (a divisor of ``dim``), blocks.
        rows, pixels: image rows (tokens) and pixels per row.
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
        for name, value in (("n_classes", n_classes), ("dim", dim), ("layers", layers)):
            positive_int(name, owner, value)
        if positive_int("heads", owner, heads) and dim % heads:
            raise param_error("heads", owner, f"a divisor of dim={dim}", heads)
        self.rows, self.pixels = rows, pixels
        self.embed = nn.Linear(pixels, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(0.02 * torch.randn(1, rows + 1, dim))
        self.blocks = nn.ModuleList(_Block(dim, heads, 4 * dim) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)

    def features(self, x: Tensor) -> Tensor:
        """The final (normalised) CLS state, ``[batch, dim]``."""
        if x.ndim != 3 or tuple(x.shape[1:]) != (self.rows, self.pixels):
            raise param_error(
                "x",
                "DigitsEncoder",
                f"a tensor of shape [batch, {self.rows}, {self.pixels}]",
                Described(f"shape {tuple(x.shape)}"),
            )
        h = self.embed(x)
        h = torch.cat([self.cls.expand(len(x), -1, -1), h], dim=1) + self.pos
        for block in self.blocks:
            h = block(h)
        return self.norm(h[:, 0])

    def forward(self, x: Tensor) -> Tensor:
        """Logits ``[batch, n_classes]``."""
        return self.head(self.features(x))
