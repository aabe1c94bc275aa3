"""Run the experiments on one torch thread.

The networks are small (batch 256, 3 x 128) and the Sinkhorn and bridge algebra are float64
vector work, so a second intra-op thread buys little; on a shared machine it spins on the
other jobs' cores and multiplied the CPU time of a training by up to 15 (measured: 300 steps,
2.9 s of CPU on one thread against 44 s on two under a load average of 16).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

__all__ = ["one_thread"]


@contextmanager
def one_thread() -> Iterator[None]:
    """Set ``torch.set_num_threads(1)`` for the block and restore the caller's setting after."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
