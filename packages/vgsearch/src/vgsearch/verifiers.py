"""Stand-in process reward models (PRMs): :class:`NoisyPRM`, whose step correctness is known,
and :class:`LearnedPRM`, a logistic regression on step features trained from labelled traces.

NoisyPRM. Let ``k`` be the first reasoning step whose stated value differs from the true
``a_k`` (an error, which propagates). From step ``k`` on, at each step ``j >= k`` the PRM detects
the error independently with probability ``q_detect``; once detected it stays detected. The score
of step ``j`` is

    s_j = sigmoid(beta * d_j + eta * xi_j),   d_j = -1 if detected by step j else +1,

with ``xi_j ~ N(0, 1)``. The detection coins and ``xi_j`` are functions of ``hash(prefix[:j],
seed)`` (:mod:`vgsearch.hashing`), so re-scoring a prefix, or the shared part of two prefixes,
gives the same scores. ``quality="strong"``: (beta, eta, q_detect) = (2, 0.5, 0.9); ``"weak"``:
(1, 1, 0.5). The trade-off the paper studies is in these knobs: pruning helps when errors
are caught early (small g), each call costs the whole prefix (large g), and noise makes frequent
pruning risky.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from paperkit import check_choice, check_int, check_real
from vgsearch.hashing import gaussian, mix, uniform
from vgsearch.steps import Step, reasoning_texts, reasoning_values

__all__ = ["QUALITIES", "LearnedPRM", "NoisyPRM", "step_features"]

#: (beta, eta, q_detect) of each preset quality.
QUALITIES = {"strong": (2.0, 0.5, 0.9), "weak": (1.0, 1.0, 0.5)}


def _prefix_hashes(
    key: int, seed: int, values: Sequence[int], texts: Sequence[str] | None = None
) -> list[int]:
    """``hash(prefix[:j + 1], seed)`` for every j: a rolling splitmix64 over each reasoning
    step's stated value and text (CRC-32)."""
    h = mix(key ^ mix(seed))
    out = []
    for j, v in enumerate(values):
        text = zlib.crc32(texts[j].encode()) if texts is not None else 0
        h = mix(h ^ ((v + 1) * 0x100000001B3) ^ (text << 24))
        out.append(h)
    return out


def _check_batch(owner: str, problems: Sequence[Any], prefixes: Sequence[Any]) -> None:
    if len(problems) != len(prefixes):
        raise ValueError(
            f"The 'prefixes' parameter of {owner} must have one entry per problem "
            f"({len(problems)}). Got {len(prefixes)} instead."
        )


class NoisyPRM:
    """The synthetic PRM of the module docstring (a :class:`vgsearch.Verifier`).

    ``beta``, ``eta``, ``q_detect`` override the preset of ``quality`` one by one. NaN policy:
    refused in every knob (scores are always finite, in (0, 1)).

    >>> from vgsearch.task import ChainArithmetic
    >>> p, prm = ChainArithmetic(1, seed=0), NoisyPRM("strong", eta=0.0)
    >>> right = [Step("", v, 20, False) for v in p.values[:2]]
    >>> [round(s, 3) for s in prm.score([p], [right])[0]]
    [0.881, 0.881]
    """

    def __init__(
        self,
        quality: str = "strong",
        *,
        beta: float | None = None,
        eta: float | None = None,
        q_detect: float | None = None,
        seed: int = 0,
    ) -> None:
        owner = "NoisyPRM"
        self.quality = check_choice("quality", owner, quality, tuple(QUALITIES))
        b0, e0, q0 = QUALITIES[quality]
        self.beta = check_real("beta", owner, b0 if beta is None else beta, low=0.0)
        self.eta = check_real("eta", owner, e0 if eta is None else eta, low=0.0)
        self.q_detect = check_real(
            "q_detect", owner, q0 if q_detect is None else q_detect, low=0.0, high=1.0
        )
        self.seed = check_int("seed", owner, seed, low=0)

    def __repr__(self) -> str:
        return f"NoisyPRM(beta={self.beta}, eta={self.eta}, q_detect={self.q_detect})"

    def step_scores(
        self, problem: Any, values: Sequence[int], texts: Sequence[str] | None = None
    ) -> list[float]:
        """Scores of the reasoning steps stating ``values`` with ``texts`` (the formula of the
        module; the texts enter the hash only)."""
        truth = problem.values
        detected = False
        erred = False
        out = []
        for j, h in enumerate(_prefix_hashes(problem.key, self.seed, values, texts)):
            erred = erred or j >= len(truth) or values[j] != truth[j]
            if erred and not detected:
                detected = uniform(h, 1) < self.q_detect
            d = -1.0 if detected else 1.0
            z = self.beta * d + (self.eta * gaussian(h, 2) if self.eta else 0.0)
            out.append(1.0 / (1.0 + math.exp(-z)))
        return out

    def score(
        self, problems: Sequence[Any], prefixes: Sequence[Sequence[Step]]
    ) -> list[list[float]]:
        """Per prefix, one score per reasoning step."""
        _check_batch("NoisyPRM.score", problems, prefixes)
        return [
            self.step_scores(p, reasoning_values(prefix), reasoning_texts(prefix))
            for p, prefix in zip(problems, prefixes, strict=True)
        ]


def step_features(problem: Any, values: Sequence[int], misread: float, seed: int) -> np.ndarray:
    """Features of each reasoning step for :class:`LearnedPRM`, shape ``(len(values), 7)``:

    ``[check_j, failed_j, j / L, level / 5, op is +, op is -, op is x]``, where ``check_j = 1``
    when the step's stated value equals its operation applied to the previous stated value, *as
    read* by the PRM: the check is flipped with probability ``misread`` (a function of
    ``hash(prefix[:j], seed)``), and ``failed_j`` is the number of failed checks among steps
    0..j.
    """
    from vgsearch.task import apply_op

    rows = []
    prev = problem.a0
    failed = 0
    hashes = _prefix_hashes(problem.key, seed, values)
    for j, v in enumerate(values):
        op, c = problem.ops[min(j, problem.L - 1)]
        ok = float(v == apply_op(prev, op, c))
        if uniform(hashes[j], 3) < misread:
            ok = 1.0 - ok
        failed += ok == 0.0
        rows.append(
            [ok, failed, j / problem.L, problem.level / 5]
            + [float(op == o) for o in ("+", "-", "*")]
        )
        prev = v
    return np.asarray(rows, dtype=float).reshape(len(values), 7)


class LearnedPRM:
    """A PRM learned from labelled traces: logistic regression (scikit-learn) of "the prefix is
    still correct at step j" on :func:`step_features`; the score of step j is the predicted
    probability. ``misread`` is the probability that the PRM misreads one step's arithmetic
    (what keeps a learned verifier imperfect). NaN policy: refused.

    >>> from vgsearch.task import NoisyStepGenerator, make_problems
    >>> prm = LearnedPRM(misread=0.1).fit(make_problems(4), NoisyStepGenerator(), seed=0)
    >>> 0.0 < prm.score_values(make_problems(1)[0], [1, 2])[0] < 1.0
    True
    """

    def __init__(self, misread: float = 0.05, *, C: float = 1.0, seed: int = 0) -> None:
        self.misread = check_real("misread", "LearnedPRM", misread, low=0.0, high=0.5)
        self.C = check_real("C", "LearnedPRM", C, low=0.0, low_open=True)
        self.seed = check_int("seed", "LearnedPRM", seed, low=0)
        self.model_: Any = None

    def fit(
        self, problems: Sequence[Any], generator: Any, *, samples: int = 8, seed: int = 0
    ) -> LearnedPRM:
        """Sample ``samples`` full solutions per problem from ``generator``, label every step
        (prefix correct so far), and fit the logistic regression. Returns ``self``."""
        from sklearn.linear_model import LogisticRegression

        if len(problems) == 0:
            raise ValueError("The 'problems' parameter of LearnedPRM.fit must be non-empty.")
        if not hasattr(generator, "step"):
            raise TypeError(
                "The 'generator' parameter of LearnedPRM.fit must have a step method. "
                f"Got a {type(generator).__name__} instead."
            )
        samples = check_int("samples", "LearnedPRM.fit", samples, low=1, high=10**4)
        seed = check_int("seed", "LearnedPRM.fit", seed, low=0)
        rng = np.random.default_rng(seed)
        X, y = [], []
        for p in problems:
            chunks = generator.step([p] * samples, [[] for _ in range(samples)], rng, to_end=True)
            for chunk in chunks:
                values = reasoning_values([chunk])
                X.append(step_features(p, values, self.misread, self.seed))
                right = np.cumprod([v == t for v, t in zip(values, p.values, strict=False)])
                y.append(right.astype(int))
        y_all = np.concatenate(y)
        if len(np.unique(y_all)) < 2:
            raise ValueError(
                "The 'problems' parameter of LearnedPRM.fit must give both correct and wrong "
                "steps to learn from. Got only one kind instead."
            )
        self.model_ = LogisticRegression(C=self.C, max_iter=1000).fit(np.concatenate(X), y_all)
        return self

    def score_values(self, problem: Any, values: Sequence[int]) -> list[float]:
        """Scores of the reasoning steps stating ``values``."""
        if self.model_ is None:
            raise ValueError("LearnedPRM must be fitted (call fit) before scoring.")
        feats = step_features(problem, values, self.misread, self.seed)
        return [float(s) for s in self.model_.predict_proba(feats)[:, 1]]

    def score(
        self, problems: Sequence[Any], prefixes: Sequence[Sequence[Step]]
    ) -> list[list[float]]:
        """Per prefix, one score per reasoning step (a :class:`vgsearch.Verifier`)."""
        _check_batch("LearnedPRM.score", problems, prefixes)
        return [
            self.score_values(p, reasoning_values(prefix))
            for p, prefix in zip(problems, prefixes, strict=True)
        ]
