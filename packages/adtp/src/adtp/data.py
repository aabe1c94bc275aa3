r"""The synthetic needle task: a few signal tokens hidden among distractors (and decoys).

A sequence is ``[CLS] x_1 ... x_{n-2} [SEP]`` followed by padding. Among the content tokens
hide :math:`s\in\{1,\dots,\text{max\_signals}\}` *signal* tokens, each of polarity +1 (ids in
``POSITIVE``) or -1 (ids in ``NEGATIVE``); the label is the majority polarity
(``1`` when :math:`\sum \pm 1 > 0`). Even counts are drawn without ties (2-0, 3-1, 4-0), so
the majority is always defined. The rest are distractors drawn uniformly from the remaining
vocabulary. With ``decoys=True`` up to 3 *decoys* are planted: a signal id immediately
followed by the ``CANCEL`` token, which annuls it. A model must look at a decoy to rule it out,
so attention tends to fall on decoys, while they do not change the prediction: the
attention-versus-attribution gap is partly built in (run ``decoys=False`` to see it without).

The lengths are uniform in ``[min_len, max_len]`` (CLS and SEP included) and the difficulty
(the number of signals) uniform in ``1..max_signals``, independent of the length, so a good
per-sequence budget keeps a smaller fraction of the longer sequences.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from paperkit import check_bool, check_choice, check_int

__all__ = ["CANCEL", "CLS", "NEGATIVE", "PAD", "POSITIVE", "SEP", "NeedleBatch", "needle_task"]

PAD, CLS, SEP, CANCEL = 0, 1, 2, 3
#: Signal ids: 8 of each polarity.
POSITIVE = tuple(range(4, 12))
NEGATIVE = tuple(range(12, 20))
FIRST_DISTRACTOR = 20
MAX_DECOYS = 3


class NeedleBatch(NamedTuple):
    """The task's tensors: ``input_ids`` (n, max_len) long, ``attention_mask`` (n, max_len)
    bool, ``labels`` (n,) long, ``signal_mask`` (n, max_len) bool (True at the real signals)."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor
    signal_mask: torch.Tensor


def _polarities(rng: np.random.Generator, s: int) -> np.ndarray:
    """Polarities of ``s`` signals with a strict majority (ties redrawn)."""
    while True:
        pol = rng.choice((-1, 1), size=s)
        if pol.sum() != 0:
            return pol


def needle_task(
    n: int,
    vocab: int = 200,
    min_len: int = 16,
    max_len: int = 128,
    max_signals: int = 4,
    seed: int = 0,
    *,
    decoys: bool = True,
    label: str = "majority",
) -> NeedleBatch:
    r"""``n`` sequences of the needle task (see the module docstring).

    ``label="majority"``: the majority polarity of the signals; ``"parity"``: 1 when the
    number of positive signals is odd. Same ``seed``, same data. NaN policy: no float inputs.

    >>> x = needle_task(4, max_len=32, seed=0)
    >>> x.input_ids.shape, bool((x.input_ids[:, 0] == CLS).all())
    (torch.Size([4, 32]), True)
    """
    owner = "needle_task"
    n = check_int("n", owner, n, low=1, high=10**6)
    vocab = check_int("vocab", owner, vocab, low=FIRST_DISTRACTOR + 1, high=10**6)
    max_len = check_int("max_len", owner, max_len, low=8, high=4096)
    min_len = check_int("min_len", owner, min_len, low=8, high=max_len)
    max_signals = check_int("max_signals", owner, max_signals, low=1, high=min_len // 4)
    seed = check_int("seed", owner, seed, low=0)
    decoys = check_bool("decoys", owner, decoys)
    check_choice("label", owner, label, ("majority", "parity"))
    rng = np.random.default_rng(seed)
    ids = np.zeros((n, max_len), dtype=np.int64)
    sig = np.zeros((n, max_len), dtype=bool)
    labels = np.zeros(n, dtype=np.int64)
    for i in range(n):
        length = int(rng.integers(min_len, max_len + 1))
        content = length - 2
        s = int(rng.integers(1, max_signals + 1))
        d = int(rng.integers(0, MAX_DECOYS + 1)) if decoys else 0
        row = rng.integers(FIRST_DISTRACTOR, vocab, size=content)
        # slots: a signal takes one position, a decoy two (signal id, CANCEL)
        free = np.ones(content, dtype=bool)
        for _ in range(d):
            starts = np.flatnonzero(free[:-1] & free[1:])
            if free.sum() - 2 < s or starts.size == 0:  # keep room for the signals
                break
            j = int(rng.choice(starts))
            row[j] = rng.choice(POSITIVE + NEGATIVE)
            row[j + 1] = CANCEL
            free[j : j + 2] = False
        pol = _polarities(rng, s) if label == "majority" else rng.choice((-1, 1), size=s)
        slots = rng.choice(np.flatnonzero(free), size=s, replace=False)
        for j, p in zip(slots, pol, strict=True):
            row[j] = rng.choice(POSITIVE if p > 0 else NEGATIVE)
            sig[i, 1 + j] = True
        ids[i, 0], ids[i, 1 : 1 + content], ids[i, length - 1] = CLS, row, SEP
        labels[i] = int(pol.sum() > 0) if label == "majority" else int((pol > 0).sum() % 2)
    mask = ids != PAD
    return NeedleBatch(
        torch.from_numpy(ids),
        torch.from_numpy(mask),
        torch.from_numpy(labels),
        torch.from_numpy(sig),
    )
