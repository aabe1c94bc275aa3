"""The character-level language model and the weighted loss of soft deduplication (the paper's
adaptive reweighting).

Per-sample loss ℓ_b = mean token negative log-likelihood of sample b (padding excluded); the
batch loss is the weighted mean

    L = Σ_b w_b ℓ_b / Σ_b w_b,        w_b = F(x_b)^(-α)

which equals the ordinary mean of ℓ_b for uniform weights.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import torch
from torch import nn

from paperkit import check_int, check_tensor, describe, param_error

__all__ = ["PAD_ID", "VOCAB", "CharGRU", "encode_texts", "weighted_lm_loss"]

#: Token ids: 0 padding, 1 any character outside ``string.printable``, then the printable ones.
PAD_ID, UNK_ID = 0, 1
VOCAB = string.printable
_INDEX = {ch: i + 2 for i, ch in enumerate(VOCAB)}
VOCAB_SIZE = len(VOCAB) + 2


def encode_texts(texts: Sequence[str], length: int | None = None) -> torch.Tensor:
    """Token ids (N, length) of ``texts``, right-padded with :data:`PAD_ID` (length: longest).
    NaN policy: not applicable (text input)."""
    if not isinstance(texts, (list, tuple)) or not all(isinstance(t, str) for t in texts):
        raise param_error("texts", "encode_texts", "a list of str", describe(texts), cls=TypeError)
    width = max((len(t) for t in texts), default=0) if length is None else length
    width = check_int("length", "encode_texts", width, low=1, high=1_000_000)
    out = torch.full((len(texts), width), PAD_ID, dtype=torch.long)
    for n, text in enumerate(texts):
        ids = [_INDEX.get(ch, UNK_ID) for ch in text[:width]]
        out[n, : len(ids)] = torch.tensor(ids, dtype=torch.long)
    return out


class CharGRU(nn.Module):
    """Embedding (``emb``) → 1-layer GRU (``hidden``) → linear to the vocabulary.

    ``forward(tokens (B, L) long) -> logits (B, L, V)``. NaN policy: not applicable (token ids).
    """

    def __init__(self, emb: int = 32, hidden: int = 128, vocab: int = VOCAB_SIZE) -> None:
        super().__init__()
        emb = check_int("emb", "CharGRU", emb, low=1, high=4096)
        hidden = check_int("hidden", "CharGRU", hidden, low=1, high=4096)
        vocab = check_int("vocab", "CharGRU", vocab, low=2, high=1_000_000)
        self.embed = nn.Embedding(vocab, emb, padding_idx=PAD_ID)
        self.gru = nn.GRU(emb, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        check_tensor("tokens", "CharGRU", tokens, shape=("B", "L"), dtype="int")
        if int(tokens.min()) < 0 or int(tokens.max()) >= self.embed.num_embeddings:
            raise param_error(
                "tokens", "CharGRU", f"ids in [0, {self.embed.num_embeddings})", describe(tokens)
            )
        hidden, _ = self.gru(self.embed(tokens))
        return self.head(hidden)


def weighted_lm_loss(
    logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor, pad_id: int = PAD_ID
) -> torch.Tensor:
    """Σ_b w_b ℓ_b / Σ_b w_b with ℓ_b the mean NLL over sample b's non-pad target tokens.

    Shapes: ``logits`` (B, L, V) float, ``targets`` (B, L) integer, ``weights`` (B,) float ≥ 0
    with a positive sum. A sample without any non-pad target has ℓ_b = 0. NaN policy: NaN or
    inf in logits or weights is refused.

    >>> logits = torch.zeros(2, 3, 4)
    >>> targets = torch.tensor([[1, 2, 0], [3, 3, 3]])
    >>> float(weighted_lm_loss(logits, targets, torch.tensor([1.0, 3.0])))  # log 4 everywhere
    1.3862943649291992
    """
    owner = "weighted_lm_loss"
    dims: dict = {}
    check_tensor("logits", owner, logits, shape=("B", "L", "V"), dims=dims)
    check_tensor("targets", owner, targets, shape=("B", "L"), dims=dims, dtype="int")
    check_tensor("weights", owner, weights, shape=("B",), dims=dims)
    pad_id = check_int("pad_id", owner, pad_id, low=0, high=logits.shape[-1] - 1)
    if int(targets.min()) < 0 or int(targets.max()) >= logits.shape[-1]:
        raise param_error("targets", owner, f"ids in [0, {logits.shape[-1]})", describe(targets))
    if bool((weights < 0).any()) or float(weights.sum()) <= 0:
        raise param_error("weights", owner, "non-negative with a positive sum", describe(weights))
    nll = nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    mask = (targets != pad_id).to(nll.dtype)
    per_sample = (nll * mask).sum(1) / mask.sum(1).clamp_min(1.0)
    w = weights.to(per_sample.dtype)
    return (w * per_sample).sum() / w.sum()
