"""Probing a streaming memory: what happened at a past time, and the current frame's detail.

Both probes are fixed before any result (no fitting on memory):

* **past** (event recall): a nearest-centroid classifier, its centroids the mean token of the raw
  frames of each event type in a separate training stream (:func:`fit_probe`). Asked "what was
  happening at frame :math:`s`?" at query time :math:`t_q > s`, it classifies the mean of the
  memory tokens whose span covers :math:`s`; when no token covers :math:`s` (a FIFO memory past its
  window) the answer is wrong. Accuracy is reported overall and by age :math:`t_q - s`.
* **detail** (current perception): among the tokens of the current frame :math:`t_q` (span
  :math:`[t_q, t_q]`: the now window, or without it the newest short-window frame), the label
  :math:`\\arg\\max_{c < 4} \\max_n x_{n,c}` over the reserved channels.

Size-weighted ToMe keeps an event's tokens near its own mean, so the mean-token probe mainly
measures how often *different* events are merged into one node.

NaN policy: NaN or inf in frames or centroids raises ``ValueError``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from paperkit import check_array, check_int, check_tensor, param_error
from streamforest.streams import DETAIL_CHANNELS

__all__ = ["AGE_BINS", "evaluate_memory", "fit_probe"]

#: Lower edges of the age bins (frames between the query and the queried time).
AGE_BINS = (1, 32, 128, 320)


def fit_probe(frames: torch.Tensor, event_type: torch.Tensor, n_types: int) -> torch.Tensor:
    """Centroids ``(n_types, C)``: the mean over frames of type ``k`` of each frame's mean token.

    >>> frames = torch.stack([torch.zeros(3, 2), torch.ones(3, 2)])
    >>> fit_probe(frames, torch.tensor([0, 1]), 2).tolist()
    [[0.0, 0.0], [1.0, 1.0]]

    NaN policy: NaN or inf in ``frames`` raises ``ValueError``.
    """
    owner = "fit_probe"
    dims: dict = {}
    check_tensor("frames", owner, frames, shape=("T", None, None), dims=dims)
    check_tensor("event_type", owner, event_type, shape=("T",), dims=dims, dtype="int")
    n_types = check_int("n_types", owner, n_types, low=1)
    if int(event_type.min()) < 0 or int(event_type.max()) >= n_types:
        raise param_error("event_type", owner, f"labels in [0, {n_types})", "labels outside")
    means = frames.double().mean(dim=1)
    sums = torch.zeros(n_types, frames.shape[2], dtype=torch.float64)
    sums.index_add_(0, event_type, means)
    counts = torch.bincount(event_type, minlength=n_types).double()[:, None]
    if bool((counts == 0).any()):
        raise param_error("event_type", owner, f"every type in [0, {n_types}) present", "a gap")
    return sums / counts


def _past_predictions(
    tokens: torch.Tensor, spans: torch.Tensor, times: torch.Tensor, centroids: torch.Tensor
) -> torch.Tensor:
    """Nearest-centroid class of the mean token covering each time; -1 where none covers it."""
    cover = (spans[None, :, 0] <= times[:, None]) & (spans[None, :, 1] >= times[:, None])
    counts = cover.sum(dim=1)
    means = (cover.double() @ tokens.double()) / counts.clamp_min(1)[:, None]
    pred = torch.cdist(means, centroids.double()).argmin(dim=1)
    return torch.where(counts > 0, pred, torch.full_like(pred, -1))


def _detail_prediction(tokens: torch.Tensor, spans: torch.Tensor, t: int) -> int:
    current = (spans[:, 0] == t) & (spans[:, 1] == t)
    if not bool(current.any()):
        return -1
    return int(tokens[current][:, :DETAIL_CHANNELS].max(dim=0).values.argmax())


def _age_label(lo: int, hi: int | None) -> str:
    return f"{lo}+" if hi is None else f"{lo}-{hi - 1}"


def evaluate_memory(
    memory: Any,
    stream: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    queries: Sequence[int] | np.ndarray,
    *,
    centroids: torch.Tensor,
    age_bins: Sequence[int] = AGE_BINS,
) -> dict[str, Any]:
    """Stream ``frames`` into a fresh ``memory`` (anything with ``update(frame)`` and
    ``memory() -> (tokens, spans)``) and probe it after each query frame.

    Args:
        memory: the memory, before its first frame.
        stream: ``(frames (T, N, C), event_type (T,), detail_label (T,))``
            (:func:`streamforest.make_event_stream`).
        queries: increasing frame indices in ``[1, T)``; after frame :math:`t_q` the past probe
            asks about every :math:`s < t_q`, the detail probe about :math:`t_q`.
        centroids: ``(K, C)`` from :func:`fit_probe` on a separate stream.
        age_bins: increasing lower edges of the age bins.

    Returns:
        dict with ``past_acc``, ``past_acc_by_age`` (bin label -> accuracy, None when empty),
        ``now_detail_acc``, ``tokens_used`` (mean memory tokens at the queries) and
        ``ms_per_frame`` (wall milliseconds per ``update``).

    NaN policy: NaN or inf in the frames or centroids raises ``ValueError``.
    """
    owner = "evaluate_memory"
    for method in ("update", "memory"):
        if not callable(getattr(memory, method, None)):
            raise param_error("memory", owner, f"a memory with {method}()", type(memory).__name__)
    if not isinstance(stream, (tuple, list)) or len(stream) != 3:
        raise param_error("stream", owner, "(frames, event_type, detail_label)", type(stream))
    frames, event_type, detail = stream
    dims: dict = {}
    check_tensor("stream", owner, frames, shape=("T", None, "C"), dims=dims)
    check_tensor("stream", owner, event_type, shape=("T",), dims=dims, dtype="int")
    check_tensor("stream", owner, detail, shape=("T",), dims=dims, dtype="int")
    check_tensor("centroids", owner, centroids, shape=(None, "C"), dims=dims)
    q = check_array("queries", owner, queries, ndim=1, kind="int")
    if q.min() < 1 or q.max() >= frames.shape[0] or (np.diff(q) <= 0).any():
        raise param_error("queries", owner, f"increasing frame indices in [1, {len(frames)})", q)
    edges = check_array("age_bins", owner, age_bins, ndim=1, kind="int")
    if edges[0] < 1 or (np.diff(edges) <= 0).any():
        raise param_error("age_bins", owner, "increasing ages >= 1", list(age_bins))

    correct, ages, details, sizes = [], [], [], []
    elapsed, pending = 0.0, {int(t) for t in q}
    for t in range(int(q.max()) + 1):
        start = time.perf_counter()
        memory.update(frames[t])
        elapsed += time.perf_counter() - start
        if t not in pending:
            continue
        tokens, spans = memory.memory()
        times = torch.arange(t)
        pred = _past_predictions(tokens, spans, times, centroids)
        correct.append((pred == event_type[:t]).numpy())
        ages.append(t - times.numpy())
        details.append(_detail_prediction(tokens, spans, t) == int(detail[t]))
        sizes.append(tokens.shape[0])
    hit, age = np.concatenate(correct), np.concatenate(ages)
    bounds = [*map(int, edges), None]
    by_age = {}
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        mask = (age >= lo) & (age < (hi if hi is not None else np.inf))
        by_age[_age_label(lo, hi)] = float(hit[mask].mean()) if mask.any() else None
    return {
        "past_acc": float(hit.mean()),
        "past_acc_by_age": by_age,
        "now_detail_acc": float(np.mean(details)),
        "tokens_used": float(np.mean(sizes)),
        "ms_per_frame": 1e3 * elapsed / (int(q.max()) + 1),
    }
