"""The Fine-grained Spatiotemporal Window (FSTW; paper, Sec. 3.2).

Short-term memory has two parts. The *now* window keeps the newest ``W_now`` frames with all their
``N0`` tokens (fine spatial detail of the current scene). A frame leaving it is ToMe-reduced to
``n_short`` tokens and appended to the *short* window. For every new frame the similarity to the
previous raw frame, :math:`s_t = \\cos(\\mathrm{vec}\\, x_{t-1}, \\mathrm{vec}\\, x_t)`, is stored.
While the short window holds at least ``W_short + W_split`` frames, the event boundary is the
minimum similarity among its first ``W_split`` transitions: with
:math:`j = \\arg\\min_{0 \\le j < W_\\text{split}} s(\\text{short}_j, \\text{short}_{j+1})`
the frames
``short_0 .. short_j`` leave as one event (for the long-term memory forest).

NaN policy: frames with NaN or inf raise ``ValueError``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from paperkit import check_int, check_tensor, param_error
from streamforest.tome import _merge_to

__all__ = ["FineGrainedWindow", "check_frame"]

Event = tuple[torch.Tensor, int, int]


def check_frame(owner: str, frame: torch.Tensor, shape: tuple[int, int] | None) -> None:
    """A frame ``(N0, C)``: floating, finite, and of ``shape`` when one is fixed."""
    check_tensor("frame", owner, frame, shape=shape if shape is not None else (None, None))


class FineGrainedWindow:
    """Now window and short window of the newest frames, cutting events at similarity minima.

    Args:
        now_frames: ``W_now``, frames kept at full resolution (paper code: 1; 0 removes the
            now window: frames go straight to the short window).
        short_frames: ``W_short``, frames the short window keeps after a cut (paper code: 18).
        split_window: ``W_split``, transitions searched for the boundary (paper code: 8).
        short_tokens: ``n_short``, tokens per short-window frame (paper code: 128).

    The first pushed frame fixes ``(N0, C)`` (``N0 >= short_tokens``); later frames must match.

    >>> _ = torch.manual_seed(0)

    >>> w = FineGrainedWindow(now_frames=1, short_frames=2, split_window=2, short_tokens=4)
    >>> events = [e for t in range(6) for e in w.push(torch.randn(9, 3))]
    >>> tokens, t_start, t_end = events[0]
    >>> tokens.shape[1:], t_start, t_end - t_start + 1 == tokens.shape[0]
    (torch.Size([4, 3]), 0, True)

    NaN policy: frames with NaN or inf raise ``ValueError``.
    """

    def __init__(
        self,
        now_frames: int = 1,
        short_frames: int = 18,
        split_window: int = 8,
        short_tokens: int = 128,
    ) -> None:
        owner = "FineGrainedWindow"
        self.now_frames = check_int("now_frames", owner, now_frames, low=0)
        self.short_frames = check_int("short_frames", owner, short_frames, low=0)
        self.split_window = check_int("split_window", owner, split_window, low=1)
        self.short_tokens = check_int("short_tokens", owner, short_tokens, low=1)
        self.frame_shape: tuple[int, int] | None = None
        self.frames_seen = 0
        self._now: list[tuple[int, torch.Tensor]] = []
        self._short: list[tuple[int, torch.Tensor]] = []
        self._sims: list[float] = []
        self._last: torch.Tensor | None = None

    def push(self, frame: torch.Tensor) -> list[Event]:
        """Add frame ``t = frames_seen`` ``(N0, C)``; return the events cut from the short window,
        each ``(tokens (T, n_short, C), t_start, t_end)``, oldest first."""
        owner = "FineGrainedWindow.push"
        check_frame(owner, frame, self.frame_shape)
        if self.frame_shape is None:
            if frame.shape[0] < self.short_tokens:
                raise param_error(
                    "frame",
                    owner,
                    f"at least short_tokens={self.short_tokens} tokens",
                    frame.shape[0],
                )
            self.frame_shape = (int(frame.shape[0]), int(frame.shape[1]))
        frame = frame.detach()
        flat = frame.reshape(-1)
        if self._last is not None:
            self._sims.append(float(F.cosine_similarity(self._last, flat, dim=0)))
        self._last = flat
        self._now.append((self.frames_seen, frame))
        self.frames_seen += 1
        if len(self._now) > self.now_frames:
            leaving = self._now[: len(self._now) - self.now_frames]
            del self._now[: len(leaving)]
            reduced, _ = _merge_to(torch.stack([x for _, x in leaving]), self.short_tokens)
            self._short += [(t, x) for (t, _), x in zip(leaving, reduced, strict=True)]
        return self._cut_events()

    def _cut_events(self) -> list[Event]:
        events = []
        while len(self._short) >= self.short_frames + self.split_window:
            window = self._sims[: self.split_window]
            k = window.index(min(window)) + 1  # cut after the least similar transition
            popped = self._short[:k]
            del self._short[:k], self._sims[:k]
            events.append((torch.stack([x for _, x in popped]), popped[0][0], popped[-1][0]))
        return events

    def now_tokens(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The now window's tokens ``(W_now N0, C)`` and their frame spans ``(., 2)``."""
        return _readout(self._now, self.frame_shape)

    def short_window_tokens(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The short window's tokens ``(L n_short, C)`` and their frame spans ``(., 2)``."""
        return _readout(self._short, self.frame_shape)


def _readout(
    frames: list[tuple[int, torch.Tensor]], shape: tuple[int, int] | None
) -> tuple[torch.Tensor, torch.Tensor]:
    if not frames:
        return torch.zeros(0, shape[1] if shape else 0), torch.zeros(0, 2, dtype=torch.long)
    tokens = torch.cat([x for _, x in frames])
    times = torch.tensor([t for t, _ in frames], dtype=torch.long)
    counts = torch.tensor([x.shape[0] for _, x in frames])
    return tokens, times.repeat_interleave(counts)[:, None].expand(-1, 2).contiguous()
