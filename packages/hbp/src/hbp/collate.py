r"""Feeding HBP packs through a torch ``DataLoader``: a batch sampler and a varlen collator.

A pack of samples :math:`x^{(1)},\dots,x^{(n)}` becomes one row of :math:`T=\sum\ell_i` tokens with
``cu_seqlens`` :math:`=(0,\ell_1,\ell_1+\ell_2,\dots,T)` (the flash-attention varlen convention),
per-sample ``position_ids`` restarting at 0, and labels shifted inside each sample (the last token
of a sample predicts nothing: label -100). Attention is causal *within* samples only:
:func:`block_diagonal_mask`. Usage::

    sampler = HBPBatchSampler(scheduler, rank)
    loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=pack_collate)

:func:`cu_seqlens_checked` is the one rule every function taking ``cu_seqlens`` applies: a 1-D
integer tensor of at least two offsets, starting at 0, non-decreasing (a sample may be empty),
ending at the row's length T.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.data import Sampler

from hbp.data import nonempty_list
from hbp.schedule import HBPScheduler
from paperkit import (
    Described,
    check_bool,
    check_int,
    check_memory,
    check_tensor,
    describe,
    param_error,
)

__all__ = [
    "IGNORE_INDEX",
    "HBPBatchSampler",
    "PackedBatch",
    "block_diagonal_mask",
    "cu_seqlens_checked",
    "pack_collate",
]

#: Label of the positions that carry no loss (``F.cross_entropy``'s default ``ignore_index``).
IGNORE_INDEX = -100


def cu_seqlens_checked(
    name: str, owner: str, cu_seqlens: Any, total: int | None = None
) -> list[int]:
    """The offsets of ``cu_seqlens`` as a list, or the worded error (see the module docstring).

    ``total``: the row length T the last offset must equal (None: any).
    """
    cu = check_tensor(name, owner, cu_seqlens, ndim=1, dtype="int")
    bounds = cu.tolist()
    ending = "" if total is None else f", ending at T = {total}"
    expected = f"at least 2 offsets, starting at 0, non-decreasing{ending}"
    if (
        len(bounds) < 2
        or bounds[0] != 0
        or any(b < a for a, b in zip(bounds[:-1], bounds[1:], strict=True))
        or (total is not None and bounds[-1] != total)
    ):
        shown = bounds if len(bounds) <= 12 else [*bounds[:5], "...", *bounds[-5:]]
        raise param_error(name, owner, expected, Described(str(shown)))
    return bounds


@dataclass
class PackedBatch:
    """One packed row: ``input_ids``, ``labels``, ``position_ids`` (1, T), ``cu_seqlens`` (n+1,).

    All four are integer tensors; the three rows share their shape and ``cu_seqlens`` ends at T
    (checked when the batch is built; a bad field raises the worded error naming it).
    """

    input_ids: torch.Tensor
    labels: torch.Tensor
    position_ids: torch.Tensor
    cu_seqlens: torch.Tensor

    def __post_init__(self) -> None:
        owner, dims = "PackedBatch", {}
        for name in ("input_ids", "labels", "position_ids"):
            x = getattr(self, name)
            check_tensor(name, owner, x, shape=("B", "T"), dims=dims, dtype="int")
            if name == "labels":  # IGNORE_INDEX marks the unscored positions
                x = torch.where(x == IGNORE_INDEX, 0, x)
            if int(x.min()) < 0:
                expected = "ids >= 0" + (f" or {IGNORE_INDEX}" if name == "labels" else "")
                raise param_error(name, owner, expected, int(x.min()))
        cu_seqlens_checked("cu_seqlens", owner, self.cu_seqlens, self.input_ids.shape[1])

    @property
    def loss_mask(self) -> torch.Tensor:
        """1 where a label is scored."""
        return (self.labels != IGNORE_INDEX).to(torch.int64)


def pack_collate(samples: Sequence[torch.Tensor]) -> PackedBatch:
    """Concatenate 1-D token tensors into one packed row with varlen boundaries.

    ``samples``: a non-empty list of non-empty 1-D tensors of token ids >= 0 (integer tensors:
    NaN cannot occur; floating tensors are refused).

    >>> batch = pack_collate([torch.tensor([5, 6, 7]), torch.tensor([8, 9])])
    >>> batch.cu_seqlens.tolist(), batch.position_ids.tolist(), batch.labels.tolist()
    ([0, 3, 5], [[0, 1, 2, 0, 1]], [[6, 7, -100, 9, -100]])
    """
    owner = "pack_collate"
    nonempty_list("samples", owner, samples, "1-D token tensors")
    for s in samples:
        check_tensor("samples", owner, s, ndim=1, dtype="int")
        if int(s.min()) < 0:
            raise param_error("samples", owner, "token ids >= 0", int(s.min()))
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
    r"""Boolean (T, T) mask, True where query i may attend key j: same sample (and j <= i).

    ``cu_seqlens`` follows the module's rule (integers, so NaN cannot occur); the mask's
    :math:`T^2` bytes (three times, while it is built) must fit in memory.

    >>> block_diagonal_mask(torch.tensor([0, 1, 3])).int().tolist()
    [[1, 0, 0], [0, 1, 0], [0, 1, 1]]
    """
    owner = "block_diagonal_mask"
    bounds = cu_seqlens_checked("cu_seqlens", owner, cu_seqlens)
    causal = check_bool("causal", owner, causal)
    check_memory("cu_seqlens", owner, Described(f"T = {bounds[-1]}"), 3 * bounds[-1] ** 2)
    lens = torch.tensor([b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True)])
    seq = torch.repeat_interleave(torch.arange(lens.numel()), lens)
    mask = seq[:, None] == seq[None, :]
    if causal:
        mask &= torch.ones_like(mask).tril()
    return mask


class HBPBatchSampler(Sampler[list[int]]):
    """Yields, for device ``rank``, the sample ids of each pack it trains, step after step.

    In a step of a group with SP degree k, device ``rank`` belongs to data-parallel rank
    ``rank // k`` and trains that rank's packs (the SP group splits each pack's tokens).
    ``rank`` is an integer in ``[0, scheduler.n_ranks)``.
    """

    def __init__(self, scheduler: HBPScheduler, rank: int) -> None:
        owner = "HBPBatchSampler"
        if not isinstance(scheduler, HBPScheduler):
            raise param_error(
                "scheduler", owner, "an HBPScheduler", describe(scheduler), cls=TypeError
            )
        self.scheduler = scheduler
        self.rank = check_int("rank", owner, rank, low=0, high=scheduler.n_ranks - 1)

    def __iter__(self) -> Iterator[list[int]]:
        for batch in self.scheduler:
            yield from batch.packs_per_rank[self.rank // batch.sp]

    def __len__(self) -> int:
        return sum(len(b.packs_per_rank[self.rank // b.sp]) for b in self.scheduler)
