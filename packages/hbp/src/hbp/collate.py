r"""Feeding HBP packs through a torch ``DataLoader``: a batch sampler and a varlen collator.

A pack of samples :math:`x^{(1)},\dots,x^{(n)}` becomes one row of :math:`T=\sum\ell_i` tokens with
``cu_seqlens`` :math:`=(0,\ell_1,\ell_1+\ell_2,\dots,T)` (the flash-attention varlen convention),
per-sample ``position_ids`` restarting at 0, and labels shifted inside each sample (the last token
of a sample predicts nothing: label -100). Attention is causal *within* samples only:
:func:`block_diagonal_mask`. Usage::

    sampler = HBPBatchSampler(scheduler, rank)
    loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=pack_collate)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch.utils.data import Sampler

from hbp.schedule import HBPScheduler
from paperkit import Described, param_error

__all__ = ["IGNORE_INDEX", "HBPBatchSampler", "PackedBatch", "block_diagonal_mask", "pack_collate"]

#: Label of the positions that carry no loss (``F.cross_entropy``'s default ``ignore_index``).
IGNORE_INDEX = -100


@dataclass
class PackedBatch:
    """One packed row: ``input_ids``, ``labels``, ``position_ids`` (1, T), ``cu_seqlens`` (n+1,)."""

    input_ids: torch.Tensor
    labels: torch.Tensor
    position_ids: torch.Tensor
    cu_seqlens: torch.Tensor

    @property
    def loss_mask(self) -> torch.Tensor:
        """1 where a label is scored."""
        return (self.labels != IGNORE_INDEX).to(torch.int64)


def pack_collate(samples: Sequence[torch.Tensor]) -> PackedBatch:
    """Concatenate 1-D token tensors into one packed row with varlen boundaries."""
    if len(samples) == 0 or any(
        not isinstance(s, torch.Tensor) or s.ndim != 1 or s.numel() == 0 for s in samples
    ):
        raise param_error(
            "samples",
            "pack_collate",
            "a non-empty list of non-empty 1-D token tensors",
            Described(f"{len(samples)} items"),
        )
    lens = torch.tensor([s.numel() for s in samples])
    cu = torch.zeros(len(samples) + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(lens, 0)
    ids = torch.cat(list(samples)).long()
    labels = torch.full_like(ids, IGNORE_INDEX)
    position = torch.cat([torch.arange(n) for n in lens.tolist()])
    for start, end in zip(cu[:-1].tolist(), cu[1:].tolist(), strict=True):
        labels[start : end - 1] = ids[start + 1 : end]
    return PackedBatch(ids[None], labels[None], position[None], cu)


def block_diagonal_mask(cu_seqlens: torch.Tensor, causal: bool = True) -> torch.Tensor:
    r"""Boolean (T, T) mask, True where query i may attend key j: same sample (and j <= i)."""
    lens = cu_seqlens[1:] - cu_seqlens[:-1]
    if cu_seqlens.ndim != 1 or lens.numel() == 0 or bool((lens <= 0).any()):
        raise param_error(
            "cu_seqlens",
            "block_diagonal_mask",
            "increasing offsets starting at 0",
            Described(f"{cu_seqlens.tolist()}"),
        )
    seq = torch.repeat_interleave(torch.arange(lens.numel()), lens.long())
    mask = seq[:, None] == seq[None, :]
    if causal:
        mask &= torch.ones_like(mask).tril()
    return mask


class HBPBatchSampler(Sampler[list[int]]):
    """Yields, for device ``rank``, the sample ids of each pack it trains, step after step.

    In a step of a group with SP degree k, device ``rank`` belongs to data-parallel rank
    ``rank // k`` and trains that rank's packs (the SP group splits each pack's tokens).
    """

    def __init__(self, scheduler: HBPScheduler, rank: int) -> None:
        if not 0 <= rank < scheduler.n_ranks:
            raise param_error("rank", "HBPBatchSampler", f"in [0, {scheduler.n_ranks})", rank)
        self.scheduler, self.rank = scheduler, int(rank)

    def __iter__(self) -> Iterator[list[int]]:
        for batch in self.scheduler:
            yield from batch.packs_per_rank[self.rank // batch.sp]

    def __len__(self) -> int:
        return sum(len(b.packs_per_rank[self.rank // b.sp]) for b in self.scheduler)
