"""StreamForest's memory: the Fine-grained Spatiotemporal Window in front of the Persistent Event
Memory Forest (paper, Sec. 3.2-3.3, Fig. 2).

Every new frame enters the now window; frames leaving it are ToMe-reduced into the short window;
events cut from the short window at similarity minima become leaves of the forest, which merges
adjacent events by the penalty whenever its token quota is exceeded. The memory handed to the
language model is ``[long-term events in temporal order | short window | now window]``, each
token tagged with the frame span of the node it belongs to (the MLLM's spatial and temporal
position encodings are outside this module).

NaN policy: frames with NaN or inf raise ``ValueError``.
"""

from __future__ import annotations

import torch

from paperkit import check_int
from streamforest.forest import EventNode, PersistentEventMemoryForest
from streamforest.window import FineGrainedWindow

__all__ = ["EventNode", "FineGrainedWindow", "PersistentEventMemoryForest", "StreamForestMemory"]


class StreamForestMemory:
    """FSTW + PEMF, updated one frame at a time (defaults: the paper's public code).

    Args:
        now_frames, short_frames, split_window, short_tokens: the window
            (:class:`FineGrainedWindow`; 1, 18, 8, 128).
        tokens_per_frame, quota, w_sim, w_time, w_merge, similarity: the forest
            (:class:`PersistentEventMemoryForest`; 64, 5120, 0.4, 0.2, 0.4, ``"tome"``).

    The penalty's current time is :math:`t_\\text{now}` = the index of the newest frame (frames
    seen minus one), as in the paper's code.

    >>> _ = torch.manual_seed(0)

    >>> mem = StreamForestMemory(short_frames=4, split_window=2, short_tokens=8,
    ...                          tokens_per_frame=2, quota=8)
    >>> for t in range(40):
    ...     mem.update(torch.randn(16, 4))
    >>> tokens, spans = mem.memory()
    >>> mem.forest.num_tokens <= 8, tokens.shape[0] == spans.shape[0]
    (True, True)
    >>> bool((spans[1:, 0] >= spans[:-1, 0]).all())
    True

    NaN policy: frames with NaN or inf raise ``ValueError``.
    """

    def __init__(
        self,
        now_frames: int = 1,
        short_frames: int = 18,
        split_window: int = 8,
        short_tokens: int = 128,
        tokens_per_frame: int = 64,
        quota: int | float = 5120,
        w_sim: float = 0.4,
        w_time: float = 0.2,
        w_merge: float = 0.4,
        similarity: str = "tome",
    ) -> None:
        self.window = FineGrainedWindow(now_frames, short_frames, split_window, short_tokens)
        self.forest = PersistentEventMemoryForest(
            tokens_per_frame, quota, w_sim, w_time, w_merge, similarity
        )
        check_int("short_tokens", "StreamForestMemory", short_tokens, low=tokens_per_frame)

    @property
    def frames_seen(self) -> int:
        """Frames pushed so far."""
        return self.window.frames_seen

    @property
    def num_tokens(self) -> int:
        """Tokens in the whole memory (long-term + short window + now window)."""
        return self.memory()[0].shape[0]

    def update(self, frame: torch.Tensor) -> None:
        """Push frame ``(N0, C)``: window update, new events into the forest, consolidation."""
        for tokens, t_start, t_end in self.window.push(frame):
            self.forest.add_event(tokens, t_start, t_end)
        if self.frames_seen > 1:
            self.forest.consolidate(t_now=self.frames_seen - 1)

    def memory(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(tokens (M, C), spans (M, 2))``: long-term events, short window, now window; spans are
        the inclusive frame ranges of each token's node, non-decreasing in start."""
        parts = [
            (self.forest.tokens(), self.forest.token_spans()),
            self.window.short_window_tokens(),
            self.window.now_tokens(),
        ]
        parts = [(x, s) for x, s in parts if x.shape[0]]
        if not parts:
            return torch.zeros(0, 0), torch.zeros(0, 2, dtype=torch.long)
        return torch.cat([x for x, _ in parts]), torch.cat([s for _, s in parts])
