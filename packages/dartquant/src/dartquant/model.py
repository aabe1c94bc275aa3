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

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from dartquant.quant import bit_width, clip_ratio_arg, fake_quantize_core
from dartquant.rotations import is_power_of_two, online_hadamard_core
from paperkit import Described, check_bool, check_int, check_memory, check_tensor, param_error

__all__ = [
    "LINEAR_NAMES",
    "Attention",
    "Block",
    "MLP",
    "RMSNorm",
    "TinyLlama",
    "check_model",
    "perplexity",
    "token_ids",
]

#: The projections of every decoder layer, as ``layer.get_submodule`` names.
LINEAR_NAMES = (
    "attn.q_proj",
    "attn.k_proj",
    "attn.v_proj",
    "attn.o_proj",
    "mlp.gate_proj",
    "mlp.up_proj",
    "mlp.down_proj",
)


def check_model(model: Any, owner: str) -> TinyLlama:
    """``model`` if it is a :class:`TinyLlama` (the layout the rotations are placed in, full
    precision or quantised), else a ``TypeError`` naming ``model``."""
    if not isinstance(model, TinyLlama):
        raise param_error(
            "model", owner, "a TinyLlama", Described(f"a {type(model).__name__}"), cls=TypeError
        )
    return model


def token_ids(name: str, owner: str, tokens: Any, vocab: int, *, ndim: int) -> torch.Tensor:
    """``tokens`` checked as a non-empty integer tensor of ``ndim`` dims with every id in
    ``[0, vocab)``; returned as int64 (any integer dtype is accepted and cast)."""
    check_tensor(name, owner, tokens, dtype="int", ndim=ndim)
    lo, hi = int(tokens.min()), int(tokens.max())
    if lo < 0 or hi >= vocab:
        raise param_error(
            name, owner, f"token ids in [0, {vocab})", Described(f"ids in [{lo}, {hi}]")
        )
    return tokens.long()


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
            q, k = online_hadamard_core(q), online_hadamard_core(k)
        if self.kv_bits is not None:
            k = fake_quantize_core(k, self.kv_bits, False, self.kv_clip)[0]
            v = fake_quantize_core(v, self.kv_bits, False, self.kv_clip)[0]
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
            h = online_hadamard_core(h)
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
        n_layers, n_heads, n_kv_heads: depth and heads (``n_heads`` divides ``dim`` with an even
            head width; ``n_kv_heads`` divides ``n_heads``, default ``n_heads``: plain
            multi-head attention).
        ffn_dim: SwiGLU width (default 4 d).
        embed_offset: optional fixed vector [dim] added to every embedding (a float32 buffer:
            other floating dtypes are cast; NaN and inf are refused).

    ``forward(tokens)``: ``tokens`` is an integer tensor [B, T] (any integer dtype) with every id
    in ``[0, vocab)``; other ids are refused. Sizes whose weights would not fit in memory are
    refused before anything is allocated.
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
        owner = "TinyLlama"
        vocab = check_int("vocab", owner, vocab, low=1)
        dim = check_int("dim", owner, dim, low=1)
        n_layers = check_int("n_layers", owner, n_layers, low=1)
        n_heads = check_int("n_heads", owner, n_heads, low=1)
        if dim % n_heads or (dim // n_heads) % 2:
            raise param_error(
                "n_heads", owner, f"a divisor of 'dim' = {dim} leaving an even head_dim", n_heads
            )
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        n_kv_heads = check_int("n_kv_heads", owner, n_kv_heads, low=1)
        if n_heads % n_kv_heads:
            raise param_error(
                "n_kv_heads", owner, f"a divisor of 'n_heads' = {n_heads}", n_kv_heads
            )
        ffn_dim = 4 * dim if ffn_dim is None else check_int("ffn_dim", owner, ffn_dim, low=1)
        head_dim = dim // n_heads
        layer_params = 2 * dim * dim + 2 * dim * n_kv_heads * head_dim + 3 * dim * ffn_dim
        check_memory("dim", owner, dim, 4 * dim * dim)
        check_memory("vocab", owner, vocab, 4 * 2 * vocab * dim)
        check_memory("ffn_dim", owner, ffn_dim, 4 * 3 * dim * ffn_dim)
        check_memory("n_layers", owner, n_layers, 4 * (2 * vocab * dim + n_layers * layer_params))
        if embed_offset is None:
            offset = torch.zeros(dim)
        else:
            check_tensor("embed_offset", owner, embed_offset, shape=(dim,))
            offset = embed_offset.detach().float().clone()
        self.vocab, self.dim, self.n_heads, self.n_kv_heads = vocab, dim, n_heads, n_kv_heads
        self.head_dim, self.ffn_dim = head_dim, ffn_dim
        self.embed = nn.Embedding(vocab, dim)
        nn.init.normal_(self.embed.weight, std=1.0)
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
        tokens = token_ids("tokens", "TinyLlama", tokens, self.vocab, ndim=2)
        x = self.embed(tokens) + self.embed_offset
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))

    def set_online_hadamard(self, enabled: bool) -> None:
        """Switch the R3 (Q/K) and R4 (before down_proj) online Hadamards on or off (they need
        power-of-2 ``head_dim`` and ``ffn_dim``)."""
        owner = "TinyLlama.set_online_hadamard"
        if check_bool("enabled", owner, enabled) and not self.hadamard_ready():
            raise param_error(
                "enabled",
                owner,
                "False for a model whose head_dim and ffn_dim are not both powers of 2",
                enabled,
            )
        for layer in self.layers:
            layer.attn.online_hadamard = enabled
            layer.mlp.online_hadamard = enabled

    def hadamard_ready(self) -> bool:
        """Whether the online Hadamards fit: ``head_dim`` and ``ffn_dim`` are powers of 2."""
        return is_power_of_two(self.head_dim) and is_power_of_two(self.ffn_dim)

    def set_kv_bits(self, bits: int | None, clip_ratio: float = 1.0) -> None:
        """Fake-quantise the KV cache to ``bits`` (None: full precision)."""
        owner = "TinyLlama.set_kv_bits"
        bits = bit_width("bits", owner, bits, allow_none=True)
        clip_ratio = clip_ratio_arg(owner, "clip_ratio", clip_ratio)
        for layer in self.layers:
            layer.attn.kv_bits, layer.attn.kv_clip = bits, clip_ratio


@torch.no_grad()
def perplexity(model: nn.Module, tokens: torch.Tensor, seq_len: int = 64, batch: int = 32) -> float:
    """exp(mean next-token cross-entropy) over non-overlapping windows of ``seq_len + 1`` tokens.

    ``model``: a TinyLlama (full precision or quantised); ``tokens``: a 1-D integer stream of
    at least ``seq_len + 1`` ids in ``[0, vocab)`` (other ids are refused).
    """
    owner = "perplexity"
    check_model(model, owner)
    tokens = token_ids("tokens", owner, tokens, model.embed.num_embeddings, ndim=1)
    seq_len = check_int("seq_len", owner, seq_len, low=1)
    batch = check_int("batch", owner, batch, low=1)
    n = (len(tokens) - 1) // seq_len
    if n < 1:
        raise param_error(
            "tokens", owner, f"at least seq_len + 1 = {seq_len + 1} tokens", len(tokens)
        )
    windows = torch.stack([tokens[i * seq_len : i * seq_len + seq_len + 1] for i in range(n)])
    total, count = 0.0, 0
    for i in range(0, n, batch):
        w = windows[i : i + batch]
        logits = model(w[:, :-1])
        total += F.cross_entropy(logits.flatten(0, 1), w[:, 1:].flatten(), reduction="sum").item()
        count += w[:, 1:].numel()
    return float(torch.exp(torch.tensor(total / count)))
