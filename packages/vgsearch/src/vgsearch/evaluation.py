"""Running a search configuration over a set of problems: accuracy and compute per problem."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from paperkit import check_int, param_error
from vgsearch.search import SearchConfig, vg_search

__all__ = ["evaluate"]


def evaluate(
    problems: Sequence[Any],
    cfg: SearchConfig | Sequence[SearchConfig],
    generator: Any,
    verifier: Any,
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """:func:`vgsearch.vg_search` on every problem, problem ``i`` with the stream
    ``numpy.random.default_rng([seed, i])`` and ``cfg`` (or ``cfg[i]``, one per problem, as an
    adaptive rule gives). Problems need an ``answer``.

    Returns a dict: ``acc``, ``acc_majority``, ``acc_weighted`` (fractions correct of the
    best-scored, majority and PRM-weighted answers), ``flops``, ``flops_gen``, ``flops_ver``,
    ``calls``, ``gen_tokens``, ``ver_tokens`` (means per problem), and per-problem arrays
    ``correct``, ``correct_majority``, ``correct_weighted``, ``flops_each``, ``calls_each``.
    NaN policy: as :func:`vgsearch.vg_search`.

    >>> from vgsearch import NoisyPRM, NoisyStepGenerator, make_problems
    >>> out = evaluate(make_problems(2), SearchConfig(n=4, m=2), NoisyStepGenerator(), NoisyPRM())
    >>> 0.0 <= out["acc"] <= 1.0, out["correct"].shape
    (True, (10,))
    """
    if isinstance(problems, (str, bytes)) or not isinstance(problems, Sequence):
        raise param_error(
            "problems", "evaluate", "a sequence of problems", type(problems).__name__, cls=TypeError
        )
    if len(problems) == 0:
        raise param_error("problems", "evaluate", "non-empty", "an empty sequence")
    seed = check_int("seed", "evaluate", seed, low=0)
    if isinstance(cfg, SearchConfig):
        cfgs = [cfg] * len(problems)
    elif isinstance(cfg, Sequence) and all(isinstance(c, SearchConfig) for c in cfg):
        if len(cfg) != len(problems):
            raise param_error(
                "cfg",
                "evaluate",
                f"one SearchConfig per problem ({len(problems)})",
                f"{len(cfg)} configs",
            )
        cfgs = list(cfg)
    else:
        raise param_error(
            "cfg",
            "evaluate",
            "a SearchConfig or a sequence of them",
            type(cfg).__name__,
            cls=TypeError,
        )
    rows = []
    for i, (p, c) in enumerate(zip(problems, cfgs, strict=True)):
        r = vg_search(p, generator, verifier, c, np.random.default_rng([seed, i]))
        rows.append(
            (
                r.answer == p.answer,
                r.majority_answer == p.answer,
                r.weighted_answer == p.answer,
                r.flops,
                r.flops_gen,
                r.flops_ver,
                r.n_verifier_calls,
                r.gen_tokens,
                r.ver_tokens,
            )
        )
    a = np.array(rows, dtype=float)
    return {
        "acc": float(a[:, 0].mean()),
        "acc_majority": float(a[:, 1].mean()),
        "acc_weighted": float(a[:, 2].mean()),
        "flops": float(a[:, 3].mean()),
        "flops_gen": float(a[:, 4].mean()),
        "flops_ver": float(a[:, 5].mean()),
        "calls": float(a[:, 6].mean()),
        "gen_tokens": float(a[:, 7].mean()),
        "ver_tokens": float(a[:, 8].mean()),
        "correct": a[:, 0].astype(bool),
        "correct_majority": a[:, 1].astype(bool),
        "correct_weighted": a[:, 2].astype(bool),
        "flops_each": a[:, 3],
        "calls_each": a[:, 6],
    }
