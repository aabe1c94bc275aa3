r"""A tiny LLaMA-style decoder with LLaMA's module names, for small-scale pre-training.

Token embedding, ``n_layers`` pre-norm blocks (RMSNorm, causal attention with rotary position
embedding, SwiGLU MLP :math:`W_{\rm down}(\mathrm{silu}(W_{\rm gate} x) \odot W_{\rm up} x)`),
final RMSNorm and an untied ``lm_head``. Module names follow Hugging Face LLaMA:
``layers.{i}.self_attn.{q,k,v,o}_proj`` and ``layers.{i}.mlp.{gate,up,down}_proj``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from paperkit import Described, check_int, check_memory, check_tensor, param_error

__all__ = ["TinyLlama"]


class RMSNorm(nn.Module):
    r""":math:`x / \sqrt{\mathrm{mean}(x^2) + \epsilon} \odot w`."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def _rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class Attention(nn.Module):
    """Causal multi-head self-attention with rotary position embedding."""

    def __init__(self, d: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (
            nn.Linear(d, d, bias=False) for _ in range(4)
        )

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        B, T, D = x.shape
        q, k, v = (
            p(x).view(B, T, self.n_heads, D // self.n_heads).transpose(1, 2)
            for p in (self.q_proj, self.k_proj, self.v_proj)
        )
        a = F.scaled_dot_product_attention(
            _rotate(q, cos, sin), _rotate(k, cos, sin), v, is_causal=True
        )
        return self.o_proj(a.transpose(1, 2).reshape(B, T, D))


class MLP(nn.Module):
    """SwiGLU feed-forward block."""

    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(d, hidden, bias=False)
        self.up_proj = nn.Linear(d, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, d, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    """Pre-norm attention and MLP, each with a residual connection."""

    def __init__(self, d: int, n_heads: int, hidden: int) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(d)
        self.self_attn = Attention(d, n_heads)
        self.post_attention_layernorm = RMSNorm(d)
        self.mlp = MLP(d, hidden)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class TinyLlama(nn.Module):
    """LLaMA-style causal LM; ``hidden`` defaults to LLaMA's ``8d/3`` rounded up to 8.

    ``forward(tokens (B, T)) -> logits (B, T, vocab)``: ``tokens`` an integer tensor (any
    integer dtype) of ids in ``[0, vocab)`` with ``T <= ctx``; other ids are refused. Weights
    start as N(0, 0.02^2), norms at one. Sizes are positive integers (``d`` a multiple of
    ``2 * n_heads``); sizes whose weights would not fit in memory are refused before anything is
    allocated.

    >>> TinyLlama(30, d=32, n_layers=1, n_heads=2, ctx=8)(torch.zeros(2, 8, dtype=torch.long)).shape
    torch.Size([2, 8, 30])
    """

    def __init__(
        self,
        vocab: int,
        d: int = 128,
        n_layers: int = 4,
        n_heads: int = 4,
        ctx: int = 64,
        hidden: int | None = None,
    ) -> None:
        super().__init__()
        owner = "TinyLlama"
        vocab = check_int("vocab", owner, vocab, low=1)
        n_layers = check_int("n_layers", owner, n_layers, low=1)
        ctx = check_int("ctx", owner, ctx, low=1)
        n_heads = check_int("n_heads", owner, n_heads, low=1)
        d = check_int("d", owner, d, low=2)
        if d % (2 * n_heads):
            raise param_error("d", owner, f"a multiple of 2 * 'n_heads' = {2 * n_heads}", d)
        hidden = (
            -(-8 * d // 3 // 8) * 8 if hidden is None else check_int("hidden", owner, hidden, low=1)
        )
        check_memory("d", owner, d, 4 * 4 * d * d)
        check_memory("vocab", owner, vocab, 4 * 2 * vocab * d)
        check_memory("hidden", owner, hidden, 4 * 3 * d * hidden)
        check_memory("ctx", owner, ctx, 4 * 2 * ctx * d)
        layer = 4 * d * d + 3 * d * hidden
        check_memory("n_layers", owner, n_layers, 4 * (2 * vocab * d + n_layers * layer))
        self.vocab, self.ctx = vocab, ctx
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(Block(d, n_heads, hidden) for _ in range(n_layers))
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        dh = d // n_heads
        inv = 10000.0 ** (-torch.arange(0, dh, 2, dtype=torch.float32) / dh)
        angles = torch.arange(ctx, dtype=torch.float32)[:, None] * inv[None]
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)

    def forward(self, tokens: Tensor) -> Tensor:
        owner = "TinyLlama.forward"
        check_tensor("tokens", owner, tokens, dtype="int", shape=("B", "T"))
        if tokens.shape[1] > self.ctx:
            raise param_error(
                "tokens",
                owner,
                f"a (batch, T) tensor of token ids with T <= ctx = {self.ctx}",
                Described(f"a tensor of shape {tuple(tokens.shape)}"),
            )
        lo, hi = int(tokens.min()), int(tokens.max())
        if lo < 0 or hi >= self.vocab:
            raise param_error(
                "tokens",
                owner,
                f"token ids in [0, {self.vocab})",
                Described(f"ids in [{lo}, {hi}]"),
            )
        T = tokens.shape[1]
        x = self.embed_tokens(tokens.long())
        cos, sin = self.cos[:T].to(x.dtype), self.sin[:T].to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.norm(x))
