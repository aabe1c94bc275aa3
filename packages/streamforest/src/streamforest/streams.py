"""A synthetic stream of visual tokens with recurring events, for evaluating streaming memories.

Stand-in for the frames of a video encoded by SigLIP (paper, Sec. 4: 729 tokens per frame; here
49 tokens of 32 channels). Channels ``0..3`` are reserved for a fine per-frame attribute; the
others carry the scene:

* every event type ``k`` (``n_event_types`` of them, fixed by ``types_seed``) has a prototype
  frame: 7 "parts" :math:`p_{k,j}` (unit-scale random vectors) assigned to 7 tokens each, plus a
  small per-token jitter (so ToMe has redundant tokens to merge, as in images);
* the stream (``seed``) is a sequence of events of uniform length in ``event_len``, each of a
  random type different from the previous one (types recur); inside an event the frames drift
  linearly along a random direction (norm 0.3) from an instance offset (norm 0.1);
* every entry gets Gaussian noise of standard deviation ``noise / sqrt(dim)`` (a noise vector of
  norm about ``noise`` per token);
* the detail label :math:`d_t \\in \\{0, 1, 2, 3\\}`, drawn anew for every frame, is written into
  ``detail_tokens`` random tokens of the frame as a one-hot of norm 0.3 over the reserved
  channels, which are zero before noise in every other token.

NaN policy: no tensor input; hyperparameters are checked (NaN refused).
"""

from __future__ import annotations

import math

import torch

from paperkit import check_int, check_real, param_error

__all__ = ["DETAIL_CHANNELS", "make_event_stream"]

#: Reserved channels carrying the detail attribute.
DETAIL_CHANNELS = 4
_PARTS = 7
_DETAIL_NORM = 0.3
_DRIFT, _OFFSET, _JITTER = 0.3, 0.1, 0.2


def _prototypes(n_types: int, tokens: int, dim: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    d = dim - DETAIL_CHANNELS
    parts = torch.randn(n_types, _PARTS, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    assign = torch.stack(
        [torch.arange(tokens)[torch.randperm(tokens, generator=g)] % _PARTS for _ in range(n_types)]
    )
    proto = parts[torch.arange(n_types)[:, None], assign]
    proto += (
        _JITTER * torch.randn(n_types, tokens, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    )
    out = torch.zeros(n_types, tokens, dim, dtype=torch.float64)
    out[..., DETAIL_CHANNELS:] = proto
    return out


def make_event_stream(
    n_frames: int = 600,
    n_event_types: int = 12,
    tokens: int = 49,
    dim: int = 32,
    event_len: tuple[int, int] = (5, 40),
    noise: float = 0.3,
    detail_tokens: int = 4,
    seed: int = 0,
    types_seed: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A stream ``frames`` ``(n_frames, tokens, dim)`` float32 with its per-frame ``event_type``
    ``(n_frames,)`` and ``detail_label`` ``(n_frames,)`` (int64). Streams with the same
    ``types_seed`` share the event types (use another ``seed`` for a probe's training stream).

    >>> frames, event_type, detail = make_event_stream(n_frames=100, seed=1)
    >>> tuple(frames.shape), int(event_type.max()) < 12, int(detail.max()) < 4
    ((100, 49, 32), True, True)

    NaN policy: no tensor input; NaN hyperparameters raise ``ValueError``.
    """
    owner = "make_event_stream"
    n_frames = check_int("n_frames", owner, n_frames, low=1, high=10**6)
    n_types = check_int("n_event_types", owner, n_event_types, low=2, high=10**4)
    tokens = check_int("tokens", owner, tokens, low=1, high=10**5)
    dim = check_int("dim", owner, dim, low=DETAIL_CHANNELS + 1, high=10**5)
    if n_frames * tokens * dim > 2 * 10**8:
        raise param_error("n_frames", owner, "at most 2e8 / (tokens * dim)", n_frames)
    if not isinstance(event_len, (tuple, list)) or len(event_len) != 2:
        raise param_error("event_len", owner, "a pair (shortest, longest)", event_len)
    lo = check_int("event_len", owner, event_len[0], low=1)
    hi = check_int("event_len", owner, event_len[1], low=lo)
    noise = check_real("noise", owner, noise, low=0)
    detail_tokens = check_int("detail_tokens", owner, detail_tokens, low=0, high=tokens)
    seed = check_int("seed", owner, seed, low=0)
    types_seed = check_int("types_seed", owner, types_seed, low=0)

    proto = _prototypes(n_types, tokens, dim, types_seed)
    g = torch.Generator().manual_seed(seed)
    d = dim - DETAIL_CHANNELS
    frames = torch.empty(n_frames, tokens, dim, dtype=torch.float64)
    event_type = torch.empty(n_frames, dtype=torch.long)
    t, prev = 0, -1
    while t < n_frames:
        length = int(torch.randint(lo, hi + 1, (1,), generator=g))
        k = int(torch.randint(n_types - 1, (1,), generator=g))
        k = k + (k >= prev) if prev >= 0 else k  # never the previous type
        drift = torch.zeros(dim, dtype=torch.float64)
        offset = torch.zeros(dim, dtype=torch.float64)
        drift[DETAIL_CHANNELS:] = _DRIFT * torch.randn(d, generator=g, dtype=torch.float64)
        offset[DETAIL_CHANNELS:] = _OFFSET * torch.randn(d, generator=g, dtype=torch.float64)
        progress = torch.linspace(0, 1, length, dtype=torch.float64)[:, None, None]
        stop = min(t + length, n_frames)
        frames[t:stop] = (proto[k] + (offset + progress * drift) / math.sqrt(d))[: stop - t]
        event_type[t:stop] = k
        t, prev = stop, k
    detail = torch.randint(DETAIL_CHANNELS, (n_frames,), generator=g)
    if detail_tokens:
        where = torch.rand(n_frames, tokens, generator=g).argsort(dim=1)[:, :detail_tokens]
        rows = torch.arange(n_frames)[:, None]
        frames[rows, where, detail[:, None]] += _DETAIL_NORM
    frames += noise / math.sqrt(dim) * torch.randn(frames.shape, generator=g, dtype=torch.float64)
    return frames.float(), event_type, detail
