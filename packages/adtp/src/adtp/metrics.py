r"""Evaluation: accuracy with its FLOPs, the precision@k of a token ranking against the true
signal positions, and the paired bootstrap of an accuracy difference."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from adtp.train import content_mask
from paperkit import check_int, check_tensor, param_error

__all__ = ["evaluate", "paired_bootstrap", "precision_at_k"]


def evaluate(
    run: Callable[[torch.Tensor, torch.Tensor], dict[str, Any]],
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    labels: torch.Tensor,
    *,
    batch_size: int = 256,
) -> dict[str, torch.Tensor]:
    """``run(ids, mask)`` (a model call returning logits, flops, kept_counts) over batches,
    without gradients: per-row ``correct`` (bool), ``flops`` and ``kept_counts``.
    NaN policy: no float inputs."""
    owner = "evaluate"
    if not callable(run):
        raise param_error("run", owner, "a callable", type(run).__name__, cls=TypeError)
    dims: dict = {}
    check_tensor("input_ids", owner, input_ids, shape=("B", "N"), dims=dims, dtype="int")
    check_tensor("attention_mask", owner, attention_mask, shape=("B", "N"), dims=dims, dtype="bool")
    check_tensor("labels", owner, labels, shape=("B",), dims=dims, dtype="int")
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=10**6)
    if bool((labels < 0).any()):
        raise param_error("labels", owner, "class indices >= 0", "a negative entry")
    correct, flops, kept = [], [], []
    with torch.no_grad():
        for s in range(0, len(labels), batch_size):
            mask = attention_mask[s : s + batch_size]
            width = int(mask.sum(1).max())
            out = run(input_ids[s : s + batch_size, :width], mask[:, :width])
            correct.append(out["logits"].argmax(-1) == labels[s : s + batch_size])
            flops.append(out["flops"])
            kept.append(out["kept_counts"])
    return {
        "correct": torch.cat(correct),
        "flops": torch.cat(flops),
        "kept_counts": torch.cat(kept),
    }


def precision_at_k(
    scores: torch.Tensor, signal_mask: torch.Tensor, attention_mask: torch.Tensor
) -> float:
    """Mean over rows of the fraction of the top-:math:`s` content tokens (by ``scores``) that are
    signals, :math:`s` the row's number of signals ([CLS], [SEP], padding never ranked).
    NaN policy: refused.

    >>> s = torch.tensor([[0.0, 3.0, 1.0, 2.0, 0.0]])
    >>> sig = torch.tensor([[False, True, False, False, False]])
    >>> precision_at_k(s, sig, torch.ones(1, 5, dtype=torch.bool))
    1.0
    """
    owner = "precision_at_k"
    dims: dict = {}
    check_tensor("scores", owner, scores, shape=("B", "N"), dims=dims)
    check_tensor("signal_mask", owner, signal_mask, shape=("B", "N"), dims=dims, dtype="bool")
    check_tensor("attention_mask", owner, attention_mask, shape=("B", "N"), dims=dims, dtype="bool")
    content = content_mask(attention_mask)
    key = scores.double().masked_fill(~content, float("-inf"))
    order = key.argsort(-1, descending=True)
    hits = signal_mask.gather(1, order)
    s = signal_mask.sum(1)
    if bool((s == 0).any()):
        raise param_error("signal_mask", owner, "at least one signal per row", "a row without")
    rank = torch.arange(scores.shape[1])[None]
    return float(((hits & (rank < s[:, None])).sum(1) / s).mean())


def paired_bootstrap(
    correct_a: torch.Tensor, correct_b: torch.Tensor, *, samples: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """Accuracy difference ``a - b`` in points and its 95% paired-bootstrap interval (the same
    resampled test items for both). NaN policy: boolean inputs only.

    >>> a = torch.tensor([True] * 90 + [False] * 10)
    >>> paired_bootstrap(a, a)
    (0.0, 0.0, 0.0)
    """
    owner = "paired_bootstrap"
    dims: dict = {}
    check_tensor("correct_a", owner, correct_a, shape=("B",), dims=dims, dtype="bool")
    check_tensor("correct_b", owner, correct_b, shape=("B",), dims=dims, dtype="bool")
    samples = check_int("samples", owner, samples, low=10, high=10**6)
    seed = check_int("seed", owner, seed, low=0)
    diff = (correct_a.double() - correct_b.double()).numpy()
    rng = np.random.default_rng(seed)
    means = np.array([diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(samples)])
    lo, hi = np.quantile(means, [0.025, 0.975])
    return 100 * float(diff.mean()), 100 * float(lo), 100 * float(hi)
