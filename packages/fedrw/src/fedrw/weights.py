"""Soft deduplication weights, and the hard-deduplication decisions of the baselines (the
paper's adaptive reweighting).

FedRW down-weights frequent samples instead of deleting them. With F(x) the global frequency of
sample x over all clients,

    w(x) = F(x)^(-α),   α ∈ [0, 1]                                              (reweighting)

α = 0 is plain training; α = 1 gives all copies of an item together the weight of one sample
(soft deduplication). The adaptive option ramps α linearly from 0 to α_max over the first
``warmup_rounds`` rounds. Hard deduplication keeps one copy: per client (local) or globally, where
the lowest-index client holding x keeps one copy (the outcome of EP-MPD, here decided from the
same PSI output, without a trusted party).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from paperkit import check_array, check_int, check_real, describe, param_error

__all__ = ["adaptive_alpha", "global_dedup_keep", "reweight"]


def reweight(freqs_per_sample: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """w = F^(-α) for each sample's global frequency F ≥ 1 (any shape, float64 out).

    NaN policy: NaN or inf frequencies are refused, as are frequencies below 1.

    >>> reweight(np.array([1, 2, 4]), alpha=1.0)
    array([1.  , 0.5 , 0.25])
    >>> reweight(np.array([1, 2, 4]), alpha=0.0)
    array([1., 1., 1.])
    """
    freqs = check_array("freqs_per_sample", "reweight", freqs_per_sample, kind="real")
    alpha = check_real("alpha", "reweight", alpha, low=0.0, high=1.0)
    if np.any(freqs < 1):
        raise param_error(
            "freqs_per_sample", "reweight", "frequencies >= 1", describe(freqs_per_sample)
        )
    return np.power(freqs.astype(np.float64), -alpha)


def adaptive_alpha(round_index: int, alpha_max: float = 1.0, warmup_rounds: int = 0) -> float:
    """α at FL round ``round_index`` (0-based): α_max · min(1, round_index / warmup_rounds);
    ``warmup_rounds`` = 0 switches the ramp off (α_max from the first round).

    NaN policy: NaN alpha_max is refused.

    >>> [adaptive_alpha(r, 1.0, 4) for r in range(6)]
    [0.0, 0.25, 0.5, 0.75, 1.0, 1.0]
    """
    owner = "adaptive_alpha"
    r = check_int("round_index", owner, round_index, low=0)
    alpha_max = check_real("alpha_max", owner, alpha_max, low=0.0, high=1.0)
    warmup = check_int("warmup_rounds", owner, warmup_rounds, low=0)
    return alpha_max if warmup == 0 else alpha_max * min(1.0, r / warmup)


def global_dedup_keep(client: int, counts: Mapping[bytes, Sequence[int]]) -> set[bytes]:
    """The items client ``client`` keeps one copy of under global hard deduplication: those for
    which it is the lowest-index client with c_j(x) > 0 (``counts[x]`` is the vector
    (c_0(x), ..., c_{K-1}(x)) the PSI gave it). NaN policy: not applicable (integer counts).

    >>> sorted(global_dedup_keep(1, {b"a": (2, 1), b"b": (0, 3)}))
    [b'b']
    """
    if not isinstance(counts, Mapping):
        raise param_error(
            "counts",
            "global_dedup_keep",
            "a dict of item -> count vector",
            describe(counts),
            cls=TypeError,
        )
    k = len(next(iter(counts.values()))) if counts else 1
    client = check_int("client", "global_dedup_keep", client, low=0, high=max(0, k - 1))
    keep = set()
    for x, vector in counts.items():
        if vector[client] <= 0:
            raise param_error(
                "counts",
                "global_dedup_keep",
                f"vectors with c_{client}(x) > 0 (own items)",
                describe(vector),
            )
        if all(c == 0 for c in vector[:client]):
            keep.add(x)
    return keep
