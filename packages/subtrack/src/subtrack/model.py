"""A tiny LLaMA-style decoder (RMSNorm, rotary attention, SwiGLU) with LLaMA's module names.

The projections are named ``q_proj``, ``k_proj``, ``v_proj``, ``o_proj``, ``gate_proj``,
``up_proj`` and ``down_proj`` so that :func:`subtrack.make_param_groups` finds them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from paperkit import check_int, check_memory, check_tensor, param_error

__all__ = ["TinyLlama"]


class RMSNorm(nn.Module):
    r""":math:`x / \sqrt{\mathrm{mean}(x^2) + \epsilon} \cdot w`."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def _rotary(x: Tensor) -> Tensor:
    """Rotary position embedding on (B, H, T, dh): rotate feature pairs by position angles."""
    T, dh = x.shape[-2], x.shape[-1]
    inv = 10000.0 ** (-torch.arange(0, dh, 2, dtype=x.dtype, device=x.device) / dh)
    angles = torch.arange(T, dtype=x.dtype, device=x.device)[:, None] * inv[None]
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class Block(nn.Module):
    """Pre-norm causal self-attention and SwiGLU MLP, each with a residual connection."""

    def __init__(self, dim: int, heads: int, hidden: int) -> None:
        super().__init__()
        self.heads = heads
        self.attn_norm = RMSNorm(dim)
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (
            nn.Linear(dim, dim, bias=False) for _ in range(4)
        )
        self.mlp_norm = RMSNorm(dim)
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        h = self.attn_norm(x)
        q, k, v = (
            proj(h).view(B, T, self.heads, D // self.heads).transpose(1, 2)
            for proj in (self.q_proj, self.k_proj, self.v_proj)
        )
        a = F.scaled_dot_product_attention(_rotary(q), _rotary(k), v, is_causal=True)
        x = x + self.o_proj(a.transpose(1, 2).reshape(B, T, D))
        h = self.mlp_norm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class TinyLlama(nn.Module):
    """Token embedding, ``layers`` decoder blocks, final RMSNorm and an untied ``lm_head``.

    ``vocab``, ``dim``, ``layers``, ``heads`` and ``hidden`` (default ``4 * dim``) are positive
    integers, ``dim`` a multiple of ``2 * heads`` (rotary pairs); a model whose float32 weights
    would not fit in memory is refused.

    >>> model = TinyLlama(vocab=29, dim=16, layers=1, heads=2)
    >>> model(torch.tensor([[1, 2, 3]])).shape
    torch.Size([1, 3, 29])
    """

    def __init__(
        self, vocab: int, dim: int = 128, layers: int = 2, heads: int = 4, hidden: int | None = None
    ) -> None:
        owner = "TinyLlama"
        vocab = check_int("vocab", owner, vocab, low=1)
        dim = check_int("dim", owner, dim, low=1)
        layers = check_int("layers", owner, layers, low=1)
        heads = check_int("heads", owner, heads, low=1)
        hidden = 4 * dim if hidden is None else check_int("hidden", owner, hidden, low=1)
        if dim % heads or (dim // heads) % 2:
            raise param_error("dim", owner, f"a multiple of 2 * heads = {2 * heads}", dim)
        # float32 weights: embedding and head vocab x dim each, per block 4 dim^2 + 3 dim hidden
        for name, value, numel in (
            ("dim", dim, 4 * dim * dim),
            ("hidden", hidden, 3 * dim * hidden),
            ("layers", layers, layers * (4 * dim * dim + 3 * dim * hidden)),
            ("vocab", vocab, 2 * vocab * dim),
        ):
            check_memory(name, owner, value, 4 * numel)
        super().__init__()
        self.vocab = vocab
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, hidden) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)

    def forward(self, tokens: Tensor) -> Tensor:
        """Logits (B, T, vocab) for token ids (B, T) in ``[0, vocab)``.

        ``tokens`` is an integer tensor (NaN cannot occur; floating ids are refused).
        """
        check_tensor("tokens", "TinyLlama", tokens, shape=("B", "T"), dtype="int")
        lo, hi = int(tokens.min()), int(tokens.max())
        if lo < 0 or hi >= self.vocab:
            raise param_error(
                "tokens", "TinyLlama", f"token ids in [0, {self.vocab})", lo if lo < 0 else hi
            )
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.norm(x))
