r"""The CRATE-style block and the CBT classifier (Contract-and-Broadcast Transformer, paper Sec. 4).

Block, with ``attn`` one of CBSA, MSSA, TSSA or softmax attention:

.. math::

    Z \leftarrow Z + \mathrm{attn}(\mathrm{LN}(Z)), \qquad
    Z \leftarrow \mathrm{ISTA}(\mathrm{LN}(Z)),\quad
    \mathrm{ISTA}(x) = \mathrm{relu}\big(x + \eta (D^\top x - D^\top D x) - \eta\lambda\big),

one proximal-gradient step of sparse coding against the dictionary :math:`D` (D x D), or the
usual residual MLP, :math:`Z \leftarrow Z + \mathrm{MLP}(\mathrm{LN}(Z))`, with ``ffn="mlp"``.
CBT: a convolutional stem (log2(patch) stride-2 3x3 convolutions with batch norm and GELU), a cls
token, learned position embeddings, ``depth`` blocks, LayerNorm and a linear head on the cls token
(or the token mean with ``pool="mean"``).
"""

from __future__ import annotations

import math

import torch
from einops import rearrange
from torch import nn

from cbsa.baselines import MSSA, TSSA, SoftmaxAttention
from cbsa.layers import CBSA, check_heads
from paperkit import check_choice, check_int, check_real, check_tensor, param_error

__all__ = ["CBT", "ISTA"]

ATTNS = ("cbsa", "mssa", "tssa", "softmax")
FFNS = ("ista", "mlp")


class ISTA(nn.Module):
    r"""One ISTA step: :math:`\mathrm{relu}(x + \eta(D^\top x - D^\top D x) - \eta\lambda)`,
    :math:`D` (dim x dim) Kaiming-uniform initialised; :math:`\eta = 0.1`, :math:`\lambda = 0.1`.

    Note that the output replaces x (it is no residual update). NaN policy: NaN or inf in ``x``
    is refused with a ValueError.

    >>> ista = ISTA(8)
    >>> bool((ista(torch.randn(3, 8)) >= 0).all())
    True
    """

    def __init__(self, dim: int, eta: float = 0.1, lambd: float = 0.1) -> None:
        super().__init__()
        self.dim = check_int("dim", "ISTA", dim, low=1, high=2**16)
        self.eta = check_real("eta", "ISTA", eta, low=0)
        self.lambd = check_real("lambd", "ISTA", lambd, low=0)
        self.weight = nn.Parameter(torch.empty(dim, dim))
        nn.init.kaiming_uniform_(self.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        autocast = torch.is_autocast_enabled(self.weight.device.type)
        check_tensor(
            "x",
            "ISTA",
            x,
            dtype="float" if autocast else (self.weight.dtype,),
            device=self.weight.device,
        )
        if x.ndim < 1 or x.shape[-1] != self.dim:
            raise param_error(
                "x", "ISTA", f"a tensor whose last axis has size {self.dim}", tuple(x.shape)
            )
        return self.update(x)

    def update(self, x: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` without the input checks (for a model that checked its input)."""
        residual = x - x @ self.weight.t()  # x - D x (row vectors: x D^T)
        return torch.relu(x + self.eta * (residual @ self.weight) - self.eta * self.lambd)


class _MLP(nn.Module):
    def __init__(self, dim: int, ratio: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, ratio * dim), nn.GELU(), nn.Linear(ratio * dim, dim)
        )

    def update(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class _Block(nn.Module):
    def __init__(self, attn: nn.Module, ffn: str, dim: int) -> None:
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), attn
        self.norm2 = nn.LayerNorm(dim)
        self.ffn_kind = ffn
        self.ffn = ISTA(dim) if ffn == "ista" else _MLP(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn.update(self.norm1(x))
        if self.ffn_kind == "ista":
            return self.ffn.update(self.norm2(x))
        return x + self.ffn.update(self.norm2(x))


def _conv_stem(in_chans: int, dim: int, patch: int) -> nn.Sequential:
    """log2(patch) stride-2 conv3x3 + BatchNorm layers (GELU between); widths double up to dim."""
    depth = int(math.log2(patch))
    widths = [in_chans] + [max(dim >> (depth - 1 - i), 1) for i in range(depth)]
    layers: list[nn.Module] = []
    for i in range(depth):
        layers += [
            nn.Conv2d(widths[i], widths[i + 1], 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(widths[i + 1]),
        ]
        if i < depth - 1:
            layers.append(nn.GELU())
    return nn.Sequential(*layers)


class CBT(nn.Module):
    r"""A vision transformer of CRATE-style blocks: the CBT of the paper with ``attn="cbsa"``,
    CRATE with ``"mssa"``, ToST-like with ``"tssa"``, a softmax ViT with ``"softmax"``.

    Args:
        image_size: side of the square input images.
        patch_size: side of a patch, a power of 2 (>= 2) dividing ``image_size`` (the conv stem).
        in_chans, num_classes, dim, depth, heads, dim_head: as usual (``dim_head`` default
            ``dim // heads``).
        num_reps: CBSA's representatives m (a perfect square; pooled from the patch grid).
        attn: ``"cbsa"``, ``"mssa"``, ``"tssa"`` or ``"softmax"``.
        ffn: ``"ista"`` (white-box) or ``"mlp"`` (4x hidden width).
        pool: ``"cls"`` or ``"mean"``.

    ``forward(img)``: (B, in_chans, image_size, image_size) -> logits (B, num_classes).
    NaN policy: NaN or inf in ``img`` is refused with a ValueError.

    >>> model = CBT(16, 4, 1, 10, dim=32, depth=2, heads=4, num_reps=4)
    >>> model(torch.randn(2, 1, 16, 16)).shape
    torch.Size([2, 10])
    """

    def __init__(
        self,
        image_size: int,
        patch_size: int,
        in_chans: int,
        num_classes: int,
        dim: int,
        depth: int,
        heads: int,
        dim_head: int | None = None,
        num_reps: int = 64,
        attn: str = "cbsa",
        ffn: str = "ista",
        pool: str = "cls",
        rep_init: str = "pool2d",
    ) -> None:
        super().__init__()
        owner = "CBT"
        image_size = check_int("image_size", owner, image_size, low=2, high=2**14)
        patch_size = check_int("patch_size", owner, patch_size, low=2, high=image_size)
        if patch_size & (patch_size - 1) or image_size % patch_size:
            raise param_error(
                "patch_size", owner, f"a power of 2 dividing image_size={image_size}", patch_size
            )
        in_chans = check_int("in_chans", owner, in_chans, low=1, high=2**12)
        num_classes = check_int("num_classes", owner, num_classes, low=1, high=2**20)
        depth = check_int("depth", owner, depth, low=1, high=256)
        dim, heads, dim_head = check_heads(owner, dim, heads, dim_head)
        check_choice("attn", owner, attn, ATTNS)
        check_choice("ffn", owner, ffn, FFNS)
        check_choice("pool", owner, pool, ("cls", "mean"))
        side = image_size // patch_size
        self.image_size, self.in_chans, self.pool = image_size, in_chans, pool

        def make_attn() -> nn.Module:
            if attn == "cbsa":
                return CBSA(
                    dim,
                    heads,
                    dim_head,
                    num_reps=num_reps,
                    rep_init=rep_init,
                    grid=(side, side),
                    has_cls=True,
                )
            return {"mssa": MSSA, "tssa": TSSA, "softmax": SoftmaxAttention}[attn](
                dim, heads, dim_head
            )

        self.stem = _conv_stem(in_chans, dim, patch_size)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.pos_embedding = nn.Parameter(torch.randn(1, side * side + 1, dim))
        self.blocks = nn.ModuleList(_Block(make_attn(), ffn, dim) for _ in range(depth))
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_classes))

    def tokens(self, img: torch.Tensor) -> torch.Tensor:
        """The (B, 1 + patches, dim) tokens after the stem, cls token and position embedding."""
        weight = self.stem[0].weight
        autocast = torch.is_autocast_enabled(weight.device.type)
        check_tensor(
            "img",
            "CBT",
            img,
            shape=("B", self.in_chans, self.image_size, self.image_size),
            dtype="float" if autocast else (weight.dtype,),
            device=weight.device,
        )
        x = rearrange(self.stem(img), "b c h w -> b (h w) c")
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1).to(x.dtype), x], dim=1)
        return x + self.pos_embedding.to(x.dtype)

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        x = self.tokens(img)
        for block in self.blocks:
            x = block(x)
        return self.head(x[:, 0] if self.pool == "cls" else x.mean(1))
