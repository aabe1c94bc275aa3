"""The Persistent Event Memory Forest (PEMF; paper, Sec. 3.3).

Long-term memory is a list of events in temporal order, each a token set ``(T, n_long, C)`` with
its time span, time centre :math:`c` and merge count :math:`m`. While the stored tokens exceed the
quota and more than one event remains, the adjacent pair with the smallest penalty

.. math::  P_i = w_s (1 - \\mathrm{sim}_i) + w_t \\frac{(c_i + c_{i+1})/2}{t_\\text{now}}
           + w_m \\frac{(m_i + m_{i+1})/2}{\\max_j (m_j + m_{j+1})/2} + 10^{-6}

is merged: their tokens are concatenated and ToMe-merged to
:math:`\\lceil (T_i + T_{i+1})/2 \\rceil`
frames of ``n_long`` tokens, the time centre becomes the frame-count-weighted mean, the merge
counts add, and both events become the children of the new node (so memory is a forest of event
trees). Only the two similarities next to the merged pair are recomputed. Old, similar and rarely
merged neighbours go first; recent and distinctive events keep their detail.

NaN policy: every public method refuses NaN or inf tokens with a ``ValueError``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from paperkit import check_choice, check_int, check_real, check_tensor, param_error
from streamforest.tome import _cross_event_similarity, _event_similarity, _merge_to

__all__ = ["SIMILARITIES", "EventNode", "PersistentEventMemoryForest", "check_budget"]

#: The event similarities: ``"tome"`` the paper's (:func:`streamforest.event_similarity`),
#: ``"cross"`` a diagnostic variant (:func:`streamforest.cross_event_similarity`).
SIMILARITIES = {"tome": _event_similarity, "cross": _cross_event_similarity}


@dataclass(eq=False)
class EventNode:
    """One event of the forest: a leaf (an event cut from the stream) or the merge of two.

    Attributes:
        tokens: ``(T, n, C)``, the event's tokens while it is a root; ``None`` once the node
            has been merged into a parent (its tokens live on, merged, in the parent; releasing
            them keeps memory bounded).
        t_start, t_end: the first and last frame index the event covers (inclusive).
        t_center: the frame-count-weighted mean of its leaves' frame indices.
        merge_count: how many leaf events it holds (1 for a leaf).
        children: the two merged nodes (empty for a leaf).
        frames: ``T``, its number of token frames.

    NaN policy: built only by :class:`PersistentEventMemoryForest` from checked (finite) tokens.
    """

    tokens: torch.Tensor | None
    t_start: int
    t_end: int
    t_center: float
    merge_count: int = 1
    children: tuple[EventNode, ...] = ()
    frames: int = field(default=0)

    def __post_init__(self) -> None:
        if self.tokens is not None:
            self.frames = int(self.tokens.shape[0])

    @property
    def num_tokens(self) -> int:
        """Tokens held (0 once merged into a parent)."""
        return 0 if self.tokens is None else self.tokens.shape[0] * self.tokens.shape[1]

    def leaves(self) -> list[EventNode]:
        """The leaf events under this node, in temporal order."""
        if not self.children:
            return [self]
        return [leaf for child in self.children for leaf in child.leaves()]


def check_budget(name: str, owner: str, value: Any, low: int) -> float:
    """A token budget: an integer ``>= low`` or ``math.inf`` (unbounded); returned as given."""
    if isinstance(value, float) and math.isinf(value) and value > 0:
        return value
    return check_int(name, owner, value, low=low)


class PersistentEventMemoryForest:
    """Long-term event memory under a token quota (paper, Sec. 3.3, Eq. of the penalty above).

    Args:
        tokens_per_frame: ``n_long``, tokens per frame of a stored event (paper code: 64).
        quota: the most long-term tokens kept (paper code: 5120), or ``math.inf``.
        w_sim, w_time, w_merge: the penalty weights :math:`w_s, w_t, w_m` (0.4, 0.2, 0.4).
        similarity: ``"tome"`` (the paper's :func:`streamforest.event_similarity`) or
            ``"cross"`` (:func:`streamforest.cross_event_similarity`, a diagnostic variant).

    >>> _ = torch.manual_seed(0)

    >>> forest = PersistentEventMemoryForest(tokens_per_frame=2, quota=8)
    >>> for t in range(3):
    ...     _ = forest.add_event(torch.randn(2, 4, 3), 2 * t, 2 * t + 1)
    >>> forest.num_tokens, len(forest.roots)
    (12, 3)
    >>> _ = forest.consolidate(t_now=6)
    >>> forest.num_tokens <= 8, len(forest.roots)
    (True, 2)

    NaN policy: NaN or inf in event tokens raises ``ValueError``.
    """

    def __init__(
        self,
        tokens_per_frame: int = 64,
        quota: int | float = 5120,
        w_sim: float = 0.4,
        w_time: float = 0.2,
        w_merge: float = 0.4,
        similarity: str = "tome",
    ) -> None:
        owner = "PersistentEventMemoryForest"
        self.tokens_per_frame = check_int("tokens_per_frame", owner, tokens_per_frame, low=1)
        self.quota = check_budget("quota", owner, quota, low=self.tokens_per_frame)
        self.w_sim = check_real("w_sim", owner, w_sim, low=0)
        self.w_time = check_real("w_time", owner, w_time, low=0)
        self.w_merge = check_real("w_merge", owner, w_merge, low=0)
        self.similarity = check_choice("similarity", owner, similarity, tuple(SIMILARITIES))
        self._events: list[EventNode] = []
        self._sims: list[float] = []
        self.num_tokens = 0
        self.merges = 0

    @property
    def roots(self) -> list[EventNode]:
        """The event trees in temporal order (their tokens are the long-term memory)."""
        return list(self._events)

    @property
    def similarities(self) -> list[float]:
        """:math:`\\mathrm{sim}_i` of every adjacent pair of roots (``similarity``)."""
        return list(self._sims)

    def add_event(self, tokens: torch.Tensor, t_start: int, t_end: int) -> EventNode:
        """Append an event ``tokens`` ``(T, n, C)`` covering frames ``t_start..t_end`` as a leaf.

        Its ``T n`` tokens are ToMe-merged jointly to ``T n_long`` (``n >= n_long``); its time
        centre is :math:`(t_\\text{start} + t_\\text{end})/2`, its merge count 1, and its similarity
        to the previous root is computed. It must start after the previous event ends.
        Consolidation is separate (:meth:`consolidate`).
        """
        owner = "PersistentEventMemoryForest.add_event"
        dims: dict = {}
        if self._events:
            dims["C"] = (self._events[-1].tokens.shape[-1], "the stored events")
        check_tensor("tokens", owner, tokens, shape=(None, None, "C"), dims=dims)
        T, n, C = tokens.shape
        if n < self.tokens_per_frame:
            raise param_error(
                "tokens", owner, f"at least tokens_per_frame={self.tokens_per_frame} per frame", n
            )
        low = self._events[-1].t_end + 1 if self._events else 0
        t_start = check_int("t_start", owner, t_start, low=low)
        t_end = check_int("t_end", owner, t_end, low=t_start)
        flat = tokens.detach().reshape(1, T * n, C)
        merged, _ = _merge_to(flat, T * self.tokens_per_frame)
        node = EventNode(
            merged.reshape(T, self.tokens_per_frame, C), t_start, t_end, (t_start + t_end) / 2
        )
        self._events.append(node)
        self.num_tokens += node.num_tokens
        if len(self._events) > 1:
            self._sims.append(self._similarity(len(self._events) - 2))
        return node

    def _similarity(self, i: int) -> float:
        a, b = self._events[i].tokens, self._events[i + 1].tokens
        return SIMILARITIES[self.similarity](a, b, self.tokens_per_frame)

    def penalties(self, t_now: float) -> torch.Tensor:
        """The merge penalty :math:`P_i` of every adjacent pair of roots, ``(E - 1,)`` float64,
        at the current time ``t_now > 0`` (the index of the newest frame seen)."""
        owner = "PersistentEventMemoryForest.penalties"
        t_now = check_real("t_now", owner, t_now, low=0, low_open=True)
        return self._penalties(t_now)

    def _penalties(self, t_now: float) -> torch.Tensor:
        ev = self._events
        if len(ev) < 2:
            return torch.zeros(0, dtype=torch.float64)
        sims = torch.tensor(self._sims, dtype=torch.float64)
        centres = torch.tensor([e.t_center for e in ev], dtype=torch.float64)
        counts = torch.tensor([e.merge_count for e in ev], dtype=torch.float64)
        tc = (centres[1:] + centres[:-1]) / 2
        mc = (counts[1:] + counts[:-1]) / 2
        return (
            self.w_sim * (1 - sims) + self.w_time * tc / t_now + self.w_merge * mc / mc.max() + 1e-6
        )

    def consolidate(self, t_now: float) -> list[EventNode]:
        """Merge argmin-penalty pairs while the tokens exceed the quota and more than one event
        remains; returns the new parent nodes in merge order."""
        owner = "PersistentEventMemoryForest.consolidate"
        t_now = check_real("t_now", owner, t_now, low=0, low_open=True)
        parents = []
        while self.num_tokens > self.quota and len(self._events) > 1:
            i = int(torch.argmin(self._penalties(t_now)))
            parents.append(self._merge(i))
        return parents

    def _merge(self, i: int) -> EventNode:
        a, b = self._events[i], self._events[i + 1]
        n, C = self.tokens_per_frame, a.tokens.shape[-1]
        frames = math.ceil((a.frames + b.frames) / 2)
        joint = torch.cat([a.tokens, b.tokens], dim=0).reshape(1, -1, C)
        merged, _ = _merge_to(joint, frames * n)
        parent = EventNode(
            merged.reshape(frames, n, C),
            a.t_start,
            b.t_end,
            (a.t_center * a.frames + b.t_center * b.frames) / (a.frames + b.frames),
            a.merge_count + b.merge_count,
            (a, b),
        )
        self.num_tokens += parent.num_tokens - a.num_tokens - b.num_tokens
        a.tokens = b.tokens = None  # the children keep their spans, centres and counts
        self._events[i : i + 2] = [parent]
        del self._sims[i]
        self._refresh_similarities(i)
        self.merges += 1
        return parent

    def _refresh_similarities(self, i: int) -> None:
        """After merging roots ``i, i+1`` into root ``i``: only its two neighbouring pairs."""
        if i >= 1:
            self._sims[i - 1] = self._similarity(i - 1)
        if i < len(self._events) - 1:
            self._sims[i] = self._similarity(i)

    def tokens(self) -> torch.Tensor:
        """The long-term memory tokens ``(M, C)``, events in temporal order (``M = 0`` when
        empty: then ``C = 0``)."""
        if not self._events:
            return torch.zeros(0, 0)
        return torch.cat([e.tokens.reshape(-1, e.tokens.shape[-1]) for e in self._events])

    def token_spans(self) -> torch.Tensor:
        """``(M, 2)`` int64: the ``[t_start, t_end]`` of the event each token belongs to."""
        spans = [
            torch.tensor([[e.t_start, e.t_end]], dtype=torch.long).expand(e.num_tokens, 2)
            for e in self._events
        ]
        return torch.cat(spans) if spans else torch.zeros(0, 2, dtype=torch.long)
