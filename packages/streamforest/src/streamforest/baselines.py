"""Baseline long-term memories under the same token budget (paper, Sec. 4, the memory
ablations), each behind the same Fine-grained Spatiotemporal Window as StreamForest, so that only
the management of long-term memory differs:

* :class:`FIFOMemory`: the most recent frames that fit in the budget;
* :class:`UniformMemory`: uniform temporal subsampling, keeping frames whose index is a multiple
  of a stride that doubles whenever the budget is exceeded; each kept frame stands for the frames
  nearest to it;
* :class:`GlobalToMeMemory`: every stored token merged with ToMe to the budget, across time
  (a merged token's span is the union of its parts' spans).

Frames leave the window as events ``(T, n_short, C)``; the baselines reduce each frame on its own
to ``tokens_per_frame`` tokens (ToMe), as frame-level memories do. ``budget=math.inf`` keeps
everything. The interface is :class:`streamforest.StreamForestMemory`'s: ``update(frame)`` and
``memory() -> (tokens (M, C), spans (M, 2))``.

NaN policy: frames with NaN or inf raise ``ValueError``.
"""

from __future__ import annotations

import torch

from paperkit import check_int
from streamforest.forest import check_budget
from streamforest.tome import _bipartite, _merge_to, _merge_wavg, _rounds
from streamforest.window import FineGrainedWindow

__all__ = ["FIFOMemory", "GlobalToMeMemory", "UniformMemory"]


class _BudgetedMemory:
    """The shared window, the per-frame reduction and the readout of the baselines."""

    def __init__(
        self,
        budget: int | float,
        now_frames: int = 1,
        short_frames: int = 18,
        split_window: int = 8,
        short_tokens: int = 128,
        tokens_per_frame: int = 64,
    ) -> None:
        owner = type(self).__name__
        self.window = FineGrainedWindow(now_frames, short_frames, split_window, short_tokens)
        self.tokens_per_frame = check_int("tokens_per_frame", owner, tokens_per_frame, low=1)
        check_int("short_tokens", owner, short_tokens, low=self.tokens_per_frame)
        self.budget = check_budget("budget", owner, budget, low=self.tokens_per_frame)

    @property
    def frames_seen(self) -> int:
        """Frames pushed so far."""
        return self.window.frames_seen

    @property
    def num_tokens(self) -> int:
        """Tokens in the whole memory (long-term + short window + now window)."""
        return self.memory()[0].shape[0]

    def update(self, frame: torch.Tensor) -> None:
        """Push frame ``(N0, C)``; frames leaving the window enter the long-term memory."""
        for tokens, t_start, _ in self.window.push(frame):
            reduced, _ = _merge_to(tokens, self.tokens_per_frame)
            self._add(reduced, t_start)

    def memory(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(tokens (M, C), spans (M, 2))``: long-term memory, short window, now window."""
        parts = [self._long(), self.window.short_window_tokens(), self.window.now_tokens()]
        parts = [(x, s) for x, s in parts if x.shape[0]]
        if not parts:
            return torch.zeros(0, 0), torch.zeros(0, 2, dtype=torch.long)
        return torch.cat([x for x, _ in parts]), torch.cat([s for _, s in parts])

    def _add(self, frames: torch.Tensor, t_start: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _long(self) -> tuple[torch.Tensor, torch.Tensor]:  # pragma: no cover - abstract
        raise NotImplementedError


def _frame_readout(
    frames: list[tuple[int, torch.Tensor]], spans: list[tuple[int, int]]
) -> tuple[torch.Tensor, torch.Tensor]:
    if not frames:
        return torch.zeros(0, 0), torch.zeros(0, 2, dtype=torch.long)
    tokens = torch.cat([x for _, x in frames])
    span = torch.tensor(spans, dtype=torch.long).repeat_interleave(frames[0][1].shape[0], dim=0)
    return tokens, span


class FIFOMemory(_BudgetedMemory):
    """Keep the newest ``floor(budget / tokens_per_frame)`` frames (first in, first out).

    Args:
        budget: long-term tokens kept (an integer ``>= tokens_per_frame``, or ``math.inf``).
        now_frames, short_frames, split_window, short_tokens, tokens_per_frame: as in
            :class:`streamforest.StreamForestMemory`.

    >>> _ = torch.manual_seed(0)

    >>> mem = FIFOMemory(4, short_frames=2, split_window=2, short_tokens=4, tokens_per_frame=2)
    >>> for t in range(20):
    ...     mem.update(torch.randn(8, 3))
    >>> long = mem.memory()[1][:4, 0].tolist()  # the two newest long-term frames, 2 tokens each
    >>> long[1] + 1 == long[2] and long[3] + 1 == int(mem.window.short_window_tokens()[1][0, 0])
    True

    NaN policy: frames with NaN or inf raise ``ValueError``.
    """

    def __init__(self, budget: int | float, **window: int) -> None:
        super().__init__(budget, **window)
        self._frames: list[tuple[int, torch.Tensor]] = []

    def _add(self, frames: torch.Tensor, t_start: int) -> None:
        self._frames += [(t_start + i, x) for i, x in enumerate(frames)]
        while len(self._frames) * self.tokens_per_frame > self.budget:
            self._frames.pop(0)

    def _long(self) -> tuple[torch.Tensor, torch.Tensor]:
        return _frame_readout(self._frames, [(t, t) for t, _ in self._frames])


class UniformMemory(_BudgetedMemory):
    """Uniform temporal subsampling: keep the frames whose index is a multiple of ``stride``;
    when the frames exceed the budget, keep every other one and double the stride.

    Each kept frame :math:`\\tau_i` stands for the frames nearest to it: its span runs from
    :math:`\\lfloor(\\tau_{i-1} + \\tau_i)/2\\rfloor + 1` to
    :math:`\\lfloor(\\tau_i + \\tau_{i+1})/2\\rfloor`
    (the first from frame 0, the last to the newest long-term frame).

    Args: as :class:`FIFOMemory`.

    >>> _ = torch.manual_seed(0)

    >>> mem = UniformMemory(4, short_frames=2, split_window=2, short_tokens=4, tokens_per_frame=2)
    >>> for t in range(20):
    ...     mem.update(torch.randn(8, 3))
    >>> spans = mem.memory()[1]
    >>> mem.stride, spans[:3, 0].tolist()  # frames 0 and 8 kept: 0 stands for 0..4, 8 from 5 on
    (8, [0, 0, 5])

    NaN policy: frames with NaN or inf raise ``ValueError``.
    """

    def __init__(self, budget: int | float, **window: int) -> None:
        super().__init__(budget, **window)
        self._frames: list[tuple[int, torch.Tensor]] = []
        self.stride = 1
        self._last = -1

    def _add(self, frames: torch.Tensor, t_start: int) -> None:
        for i, x in enumerate(frames):
            if (t_start + i) % self.stride == 0:
                self._frames.append((t_start + i, x))
        self._last = t_start + frames.shape[0] - 1
        while len(self._frames) * self.tokens_per_frame > self.budget:
            self.stride *= 2
            self._frames = [(t, x) for t, x in self._frames if t % self.stride == 0]

    def _long(self) -> tuple[torch.Tensor, torch.Tensor]:
        times = [t for t, _ in self._frames]
        ends = [(a + b) // 2 for a, b in zip(times, times[1:], strict=False)] + [self._last]
        starts = [0] + [e + 1 for e in ends[:-1]]
        return _frame_readout(self._frames, list(zip(starts, ends, strict=True)))


class GlobalToMeMemory(_BudgetedMemory):
    """Every long-term token in one pool; when the pool exceeds the budget it is ToMe-merged
    (:func:`streamforest.merge_to`) down to the budget, regardless of time. A merged token's span
    is the union ``[min start, max end]`` of the tokens it merges; the readout is sorted by start.

    Args: as :class:`FIFOMemory`.

    >>> _ = torch.manual_seed(0)

    >>> mem = GlobalToMeMemory(6, short_frames=2, split_window=2, short_tokens=4,
    ...                        tokens_per_frame=2)
    >>> for t in range(20):
    ...     mem.update(torch.randn(8, 3))
    >>> mem._long()[0].shape[0]
    6

    NaN policy: frames with NaN or inf raise ``ValueError``.
    """

    def __init__(self, budget: int | float, **window: int) -> None:
        super().__init__(budget, **window)
        self._tokens: torch.Tensor | None = None
        self._spans = torch.zeros(0, 2, dtype=torch.long)

    def _add(self, frames: torch.Tensor, t_start: int) -> None:
        T, n, C = frames.shape
        times = torch.arange(t_start, t_start + T).repeat_interleave(n)
        new = frames.reshape(T * n, C)
        x = new if self._tokens is None else torch.cat([self._tokens, new])
        spans = torch.cat([self._spans, torch.stack([times, times], dim=1)])
        if x.shape[0] > self.budget:
            x, spans = _merge_with_spans(x, spans, int(self.budget))
        self._tokens, self._spans = x, spans

    def _long(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self._tokens is None:
            return torch.zeros(0, 0), self._spans
        order = torch.argsort(self._spans[:, 0], stable=True)
        return self._tokens[order], self._spans[order]


def _merge_with_spans(
    x: torch.Tensor, spans: torch.Tensor, target: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`merge_to` on ``x`` ``(M, C)`` that also merges ``spans`` ``(M, 2)`` into unions."""
    x, size = x[None], None
    start, end = spans[None, :, :1], spans[None, :, 1:]
    for r in _rounds(x.shape[1], target):
        merge = _bipartite(x, r)
        x, size = _merge_wavg(merge, x, size)
        start, end = merge(start, mode="amin"), merge(end, mode="amax")
    return x[0], torch.cat([start, end], dim=-1)[0]
