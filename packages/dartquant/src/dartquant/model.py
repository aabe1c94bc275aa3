"""TinyLlama: a LLaMA-shaped decoder (RMSNorm, RoPE, SwiGLU MLP, multi-head / grouped-query
attention) small enough to train and quantise on a CPU.

Names follow LLaMA (``attn_norm``, ``q_proj`` ... ``o_proj``, ``mlp_norm``, ``gate_proj``,
``up_proj``, ``down_proj``, ``norm``, ``lm_head``) so the rotation placements read as in the
papers. Two switches serve rotation-based quantisation:

- ``online_hadamard``: R3 rotates Q and K by a Hadamard after RoPE (q·k is unchanged) and R4
  rotates the SwiGLU output before ``down_proj`` (whose weight must carry the same H, see
  :func:`dartquant.fusion.fuse_rotations`);
- ``kv_bits``: K (after RoPE and R3) and V are fake-quantised per token and head.

``embed_offset`` is a fixed, non-learned vector added to every embedding: it mimics the "massive
activations" of LLM residual streams (a few channels far above the rest).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from dartquant.hadamard import is_power_of_two, online_hadamard
from dartquant.quant import check_bits, quantize_act_per_token
from paperkit import Described, param_error

__all__ = ["Attention", "Block", "MLP", "RMSNorm", "TinyLlama", "perplexity"]


class RMSNorm(nn.Module):
    """y = x / sqrt(mean(x²) + eps) * g (no mean subtraction: commutes with rotations of x)."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def _rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding (rotate-half form) on x[B, heads, T, h]."""
    T, h = x.shape[-2], x.shape[-1]
    inv = base ** (-torch.arange(0, h, 2, dtype=torch.float32, device=x.device) / h)
    ang = torch.arange(T, dtype=torch.float32, device=x.device)[:, None] * inv[None, :]
    cos, sin = (
        torch.cat([ang.cos()] * 2, -1).to(x.dtype),
        torch.cat([ang.sin()] * 2, -1).to(x.dtype),
    )
    x1, x2 = x[..., : h // 2], x[..., h // 2 :]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class Attention(nn.Module):
    """Causal attention with RoPE, ``n_kv_heads`` KV heads shared by groups of query heads."""

    def __init__(self, dim: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, dim // n_heads
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(dim, dim, bias=False)
        self.online_hadamard = False
        self.kv_bits: int | None = None
        self.kv_clip = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        h = self.head_dim
        q = self.q_proj(x).view(B, T, self.n_heads, h).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv_heads, h).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv_heads, h).transpose(1, 2)
        q, k = _rope(q), _rope(k)
        if self.online_hadamard:
            q, k = online_hadamard(q), online_hadamard(k)
        if self.kv_bits is not None:
            k = quantize_act_per_token(k, self.kv_bits, self.kv_clip)
            v = quantize_act_per_token(v, self.kv_bits, self.kv_clip)
        group = self.n_heads // self.n_kv_heads
        if group > 1:
            k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(out.transpose(1, 2).reshape(B, T, self.n_heads * h))


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x)), with the optional online Hadamard R4 before down."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)
        self.online_hadamard = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.silu(self.gate_proj(x)) * self.up_proj(x)
        if self.online_hadamard:
            h = online_hadamard(h)
        return self.down_proj(h)


class Block(nn.Module):
    def __init__(self, dim: int, n_heads: int, n_kv_heads: int, ffn_dim: int) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(dim)
        self.attn = Attention(dim, n_heads, n_kv_heads)
        self.mlp_norm = RMSNorm(dim)
        self.mlp = MLP(dim, ffn_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class TinyLlama(nn.Module):
    """A LLaMA-style language model: logits[B, T, vocab] from tokens[B, T].

    Args:
        vocab: vocabulary size.
        dim: hidden size d (a power of 2 for Hadamard rotations of the residual stream).
        n_layers, n_heads, n_kv_heads: depth and heads (``n_kv_heads`` divides ``n_heads``;
            default ``n_heads``: plain multi-head attention).
        ffn_dim: SwiGLU width (default 4 d).
        embed_offset: optional fixed vector [dim] added to every embedding (a buffer).
    """

    def __init__(
        self,
        vocab: int = 96,
        dim: int = 64,
        n_layers: int = 2,
        n_heads: int = 4,
        n_kv_heads: int | None = None,
        ffn_dim: int | None = None,
        embed_offset: torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        ffn_dim = 4 * dim if ffn_dim is None else ffn_dim
        for name, value in (("vocab", vocab), ("dim", dim), ("n_layers", n_layers)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise param_error(name, "TinyLlama", "a positive int", value)
        if not isinstance(n_heads, int) or n_heads < 1 or dim % n_heads or (dim // n_heads) % 2:
            raise param_error(
                "n_heads", "TinyLlama", f"a divisor of dim={dim} with even head_dim", n_heads
            )
        if not isinstance(n_kv_heads, int) or n_kv_heads < 1 or n_heads % n_kv_heads:
            raise param_error(
                "n_kv_heads", "TinyLlama", f"a divisor of n_heads={n_heads}", n_kv_heads
            )
        self.vocab, self.dim, self.n_heads, self.n_kv_heads = vocab, dim, n_heads, n_kv_heads
        self.head_dim, self.ffn_dim = dim // n_heads, ffn_dim
        self.embed = nn.Embedding(vocab, dim)
        nn.init.normal_(self.embed.weight, std=1.0)
        offset = torch.zeros(dim) if embed_offset is None else embed_offset.detach().float().clone()
        if offset.shape != (dim,):
            raise param_error(
                "embed_offset",
                "TinyLlama",
                f"a tensor of shape ({dim},)",
                Described(f"shape {tuple(offset.shape)}"),
            )
        self.register_buffer("embed_offset", offset)
        self.layers = nn.ModuleList(
            Block(dim, n_heads, n_kv_heads, ffn_dim) for _ in range(n_layers)
        )
        self.norm = RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        for name, p in self.named_parameters():
            if name.endswith("proj.weight") or name == "lm_head.weight":
                nn.init.normal_(
                    p,
                    std=0.02
                    if not name.endswith(("o_proj.weight", "down_proj.weight"))
                    else 0.02 / (2 * n_layers) ** 0.5,
                )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.dim() != 2 or tokens.dtype not in (torch.int64, torch.int32):
            raise param_error(
                "tokens",
                "TinyLlama",
                "an integer tensor [batch, seq]",
                Described(f"{tokens.dtype} shape {tuple(tokens.shape)}"),
            )
        x = self.embed(tokens) + self.embed_offset
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))

    def set_online_hadamard(self, enabled: bool) -> None:
        """Switch the R3 (Q/K) and R4 (before down_proj) online Hadamards on or off."""
        if enabled and not (is_power_of_two(self.head_dim) and is_power_of_two(self.ffn_dim)):
            raise param_error(
                "model",
                "online_hadamard",
                "a model whose head_dim and ffn_dim are powers of 2",
                Described(f"head_dim={self.head_dim}, ffn_dim={self.ffn_dim}"),
            )
        for layer in self.layers:
            layer.attn.online_hadamard = enabled
            layer.mlp.online_hadamard = enabled

    def set_kv_bits(self, bits: int | None, clip_ratio: float = 1.0) -> None:
        """Fake-quantise the KV cache to ``bits`` (None: full precision)."""
        if bits is not None:
            check_bits(bits, "set_kv_bits")
        for layer in self.layers:
            layer.attn.kv_bits, layer.attn.kv_clip = bits, clip_ratio


@torch.no_grad()
def perplexity(model: nn.Module, tokens: torch.Tensor, seq_len: int = 64, batch: int = 32) -> float:
    """exp(mean next-token cross-entropy) over non-overlapping windows of ``seq_len + 1`` tokens."""
    n = (len(tokens) - 1) // seq_len
    if n < 1:
        raise param_error("tokens", "perplexity", f"at least {seq_len + 1} tokens", len(tokens))
    windows = torch.stack([tokens[i * seq_len : i * seq_len + seq_len + 1] for i in range(n)])
    total, count = 0.0, 0
    for i in range(0, n, batch):
        w = windows[i : i + batch]
        logits = model(w[:, :-1])
        total += F.cross_entropy(logits.flatten(0, 1), w[:, 1:].flatten(), reduction="sum").item()
        count += w[:, 1:].numel()
    return float(torch.exp(torch.tensor(total / count)))
