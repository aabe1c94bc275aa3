"""Training the small model the reproduction quantises.

A transformers ``LlamaForCausalLM`` (d = 64, 2 layers, 4 heads, vocab 96) is trained from scratch
on the synthetic grammar text with AdamW (lr 3e-3, 10% warm-up, cosine decay), batch 16 x 64
tokens. A fixed offset on 4 residual channels (``outlier_scale`` times the embedding's channel RMS
of 1) is added to every embedding during training (a non-learned parametrisation of the
embedding matrix), so the residual stream that R1 rotates carries "massive activation" channels
as LLMs do. After training the offset is folded into the embedding matrix (E + 1 offset^T looks
up the same vectors), which leaves a plain ``LlamaForCausalLM``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from dartquant.data import VOCAB
from dartquant.model import tiny_llama
from paperkit import progress

__all__ = ["random_windows", "train_tiny_llama"]


class _Offset(nn.Module):
    """E -> E + 1 offset^T: every embedding row shifted by a fixed vector."""

    def __init__(self, offset: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("offset", offset)

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        return weight + self.offset


def random_windows(ids: torch.Tensor, n: int, length: int, gen: torch.Generator) -> torch.Tensor:
    """``n`` random windows of ``length`` consecutive tokens ([n, length])."""
    starts = torch.randint(0, len(ids) - length, (n,), generator=gen)
    return torch.stack([ids[s : s + length] for s in starts.tolist()])


def train_tiny_llama(
    train_ids: torch.Tensor,
    *,
    steps: int = 300,
    dim: int = 64,
    n_layers: int = 2,
    n_heads: int = 4,
    n_kv_heads: int | None = None,
    batch: int = 16,
    seq_len: int = 64,
    lr: float = 3e-3,
    outlier_channels: int = 4,
    outlier_scale: float = 30.0,
    seed: int = 0,
    show_progress: bool = True,
) -> tuple[nn.Module, list[float]]:
    """Train a tiny ``LlamaForCausalLM`` on ``train_ids``; return it (eval mode, the offset
    folded into its embedding) and the loss per step."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    offset = torch.zeros(dim)
    offset[torch.randperm(dim, generator=gen)[:outlier_channels]] = outlier_scale
    model = tiny_llama(len(VOCAB), dim, n_layers, n_heads, n_kv_heads, ctx=seq_len)
    embed = model.model.embed_tokens
    parametrize.register_parametrization(embed, "weight", _Offset(offset))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda s: (
            (s + 1) / warm
            if s < warm
            else 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, steps - warm)))
        ),
    )
    losses = []
    model.train()
    for _ in progress(
        range(steps), "train LlamaForCausalLM", disable=None if show_progress else True
    ):
        x = random_windows(train_ids, batch, seq_len + 1, gen)
        loss = F.cross_entropy(model(x[:, :-1]).logits.flatten(0, 1), x[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
    parametrize.remove_parametrizations(embed, "weight", leave_parametrized=True)
    return model.eval(), losses
