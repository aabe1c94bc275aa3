"""Variable Granularity Search (VG-Search; the paper's unified search algorithm).

Verifier-guided search over ``n`` candidate solutions with beam width ``m`` (``n / m`` candidates
survive each verification) that calls the verifier only every ``g`` generation steps. ``g = 1`` is
beam search; verifying only finished solutions is Best-of-N.

Schedule ``"official"`` (the released code, ``beam_search.py``), iteration ``i``:

* ``i = 0``: every one of the ``n`` empty candidates generates one step; all are verified;
* ``i >= 1``: each kept candidate generates ``g - 1`` more steps unverified (those that finish
  join the completed pool and are scored once); the kept list is tiled to ``n``
  (``(kept * ceil(n / len))[:n]``, fresh copies); each copy samples one more step (the last
  iteration, when ``iterations`` is set, samples to the end); all ``n`` are verified;
* finished candidates join the pool (stop when it holds ``n``); the top ``n / m`` unfinished ones
  by aggregated score are kept (in their order; ties broken by numpy's default ``argsort`` then
  ``[-k:]``, as the released code).

Schedule ``"uniform"``: every candidate generates ``g`` steps, then all are verified, finished ones
join the pool, the top ``n / m`` are kept and tiled to ``n``. Its first verification is after ``g``
steps, so ``g >= L`` is Best-of-N(n) exactly; both schedules are beam search at ``g = 1``.

With ``m = 1`` nothing is pruned, so either schedule is Best-of-N(n): intermediate verifier calls
are skipped. Fewer than ``n`` completions are padded by tiling. The answer is the completion with
the best aggregated score; the majority and PRM-weighted majority votes are reported too.

Compute (per problem): ``FLOPs_gen = 2 P_gen (prompt + generated tokens)`` (the prompt is
prefilled once; copies share their parent's KV cache), ``FLOPs_ver = 2 P_ver sum_calls (prompt +
scored prefix tokens)``: a PRM re-reads the whole prefix at every call; with
``verifier_cache=True`` the prompt is read once and each call reads only the tokens its lineage
has not yet had scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from paperkit import check_bool, check_choice, check_int, check_real, param_error
from vgsearch.scoring import AGGREGATIONS, aggregate_scores, majority_vote, weighted_majority
from vgsearch.steps import Step

__all__ = ["SCHEDULES", "SearchConfig", "SearchResult", "beam_search", "best_of_n", "vg_search"]

SCHEDULES = ("official", "uniform")


@dataclass(frozen=True)
class SearchConfig:
    """Settings of one search (defaults: the paper's released code and example).

    Attributes:
        n: candidates ("N"); a multiple of ``m``.
        m: beam width (branching factor); ``n / m`` candidates survive each verification.
        g: verification granularity, steps between verifier calls (>= 1).
        iterations: search iterations; the last samples to the end (None: until all finish).
        schedule: ``"official"`` or ``"uniform"`` (module docstring).
        agg: per-step score aggregation, ``"last"``, ``"min"`` or ``"prod"``.
        temperature: sampling temperature, recorded for the generator (0.8).
        p_gen, p_ver: generator and verifier parameter counts for the FLOPs (1.5e9, 7e9).
        verifier_cache: count only verifier tokens not read before (module docstring).
        max_steps: a candidate with this many steps is finished (the released code's "length").

    NaN policy: refused in every field.
    """

    n: int = 16
    m: int = 4
    g: int = 1
    iterations: int | None = None
    schedule: str = "official"
    agg: str = "last"
    temperature: float = 0.8
    p_gen: float = 1.5e9
    p_ver: float = 7e9
    verifier_cache: bool = False
    max_steps: int = 256

    def __post_init__(self) -> None:
        owner = "SearchConfig"
        check_int("n", owner, self.n, low=1, high=10**5)
        check_int("m", owner, self.m, low=1, high=10**5)
        if self.n % self.m:
            raise param_error("n", owner, f"a multiple of the 'm' parameter ({self.m})", self.n)
        check_int("g", owner, self.g, low=1)
        if self.iterations is not None:
            check_int("iterations", owner, self.iterations, low=1, high=10**6)
        check_choice("schedule", owner, self.schedule, SCHEDULES)
        check_choice("agg", owner, self.agg, AGGREGATIONS)
        check_real("temperature", owner, self.temperature, low=0.0)
        check_real("p_gen", owner, self.p_gen, low=0.0)
        check_real("p_ver", owner, self.p_ver, low=0.0)
        check_bool("verifier_cache", owner, self.verifier_cache)
        check_int("max_steps", owner, self.max_steps, low=1, high=10**6)


@dataclass
class SearchResult:
    """What one search returns.

    Attributes:
        answer: final value of the completion with the best aggregated score.
        completions: the ``n`` completions (lists of :class:`Step`).
        scores: their per-step PRM scores (latest call).
        n_verifier_calls: prefixes scored.
        gen_tokens, ver_tokens: generated tokens; tokens read by the verifier (prompt included).
        flops_gen, flops_ver: ``2 P_gen (prompt + gen_tokens)`` and ``2 P_ver ver_tokens``.
        majority_answer, weighted_answer: majority and PRM-weighted majority votes.
    """

    answer: Any
    completions: list[list[Step]]
    scores: list[list[float]]
    n_verifier_calls: int
    gen_tokens: int
    ver_tokens: int
    flops_gen: float
    flops_ver: float
    majority_answer: Any = None
    weighted_answer: Any = None

    @property
    def flops(self) -> float:
        """Total FLOPs, generator plus verifier."""
        return self.flops_gen + self.flops_ver


@dataclass
class Candidate:
    """A partial solution: its steps, its latest per-step scores, how many of its tokens the
    verifier has read (for ``verifier_cache``), and its running token and reasoning-step counts
    (kept by :meth:`add`)."""

    steps: list[Step] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    ver_read: int = 0
    n_tokens: int = 0
    depth: int = 0

    def add(self, step: Step) -> None:
        """Append ``step``, updating the counts."""
        self.steps.append(step)
        self.n_tokens += int(step.n_tokens)
        self.depth += step.reasoning_steps

    def copy(self) -> Candidate:
        """An independent copy (new lists)."""
        return Candidate(
            list(self.steps), list(self.scores), self.ver_read, self.n_tokens, self.depth
        )


def _aggregate(scores: list[float], agg: str) -> float:
    """:func:`vgsearch.aggregate_scores` without the argument checks (scores from the search)."""
    if agg == "last":
        return scores[-1]
    if agg == "min":
        return min(scores)
    return float(np.prod(scores))


def tile(kept: Sequence[Candidate], n: int) -> list[Candidate]:
    """``(kept * ceil(n / len(kept)))[:n]`` as fresh copies: k1..kj, k1..kj, ... (the released
    code's duplication)."""
    reps = n // len(kept) + 1
    return [c.copy() for c in (list(kept) * reps)[:n]]


def prune(active: Sequence[Candidate], k: int, agg: str) -> list[Candidate]:
    """The top ``k`` of ``active`` by aggregated score, in their original order. Ties are broken
    as in the released code, by the last ``k`` of numpy's default ascending ``argsort`` (for
    short arrays the later candidate wins; identical prefixes score alike, so ties happen)."""
    if len(active) <= k:
        return list(active)
    agg_scores = np.array([_aggregate(c.scores, agg) for c in active])
    top = np.sort(np.argsort(agg_scores)[-k:])
    return [active[i] for i in top]


class _Run:
    """One search's generator and verifier calls, with their token ledger."""

    def __init__(self, problem, generator, verifier, cfg, rng) -> None:
        self.problem, self.generator, self.verifier = problem, generator, verifier
        self.cfg, self.rng = cfg, rng
        self.prompt = int(problem.prompt_tokens)
        self.gen_tokens = 0
        self.ver_tokens = 0
        self.calls = 0
        self.prompt_read = False

    def finished(self, c: Candidate) -> bool:
        return bool(c.steps) and (c.steps[-1].is_final or c.depth >= self.cfg.max_steps)

    def extend(self, cands: Sequence[Candidate], to_end: bool = False) -> None:
        """One batched generator call: a new step for each unfinished candidate of ``cands``
        (``to_end``: repeated until every one has finished)."""
        todo = [c for c in cands if not self.finished(c)]
        while todo:
            new = self.generator.step(
                [self.problem] * len(todo), [c.steps for c in todo], self.rng, to_end=to_end
            )
            if len(new) != len(todo):
                raise ValueError(
                    f"The 'generator' parameter of vg_search must return one step per prefix "
                    f"({len(todo)}). Got {len(new)} instead."
                )
            for c, s in zip(todo, new, strict=True):
                c.add(s)
                self.gen_tokens += int(s.n_tokens)
            if not to_end:
                return
            todo = [c for c in todo if not self.finished(c)]

    def verify(self, cands: Sequence[Candidate]) -> None:
        """One batched verifier call scoring every prefix of ``cands``."""
        if not cands:
            return
        scores = self.verifier.score([self.problem] * len(cands), [c.steps for c in cands])
        for c, s in zip(cands, scores, strict=True):
            c.scores = [float(x) for x in s]
            self.calls += 1
            tokens = c.n_tokens
            if self.cfg.verifier_cache:
                self.ver_tokens += tokens - c.ver_read + (0 if self.prompt_read else self.prompt)
                self.prompt_read = True
                c.ver_read = tokens
            else:
                self.ver_tokens += self.prompt + tokens

    def result(self, pool: list[Candidate]) -> SearchResult:
        n = self.cfg.n
        done = pool[:n] if len(pool) >= n else tile(pool, n)
        agg = [aggregate_scores(c.scores, self.cfg.agg) for c in done]
        answers = [c.steps[-1].value for c in done]
        return SearchResult(
            answer=answers[int(np.argmax(agg))],
            completions=[c.steps for c in done],
            scores=[c.scores for c in done],
            n_verifier_calls=self.calls,
            gen_tokens=self.gen_tokens,
            ver_tokens=self.ver_tokens,
            flops_gen=2.0 * self.cfg.p_gen * (self.prompt + self.gen_tokens),
            flops_ver=2.0 * self.cfg.p_ver * self.ver_tokens,
            majority_answer=majority_vote(answers),
            weighted_answer=weighted_majority(answers, agg),
        )


def _official(run: _Run) -> list[Candidate]:
    cfg = run.cfg
    keep = cfg.n // cfg.m
    active = [Candidate() for _ in range(cfg.n)]
    pool: list[Candidate] = []
    i = 0
    while cfg.iterations is None or i < cfg.iterations:
        last = cfg.iterations is not None and i == cfg.iterations - 1
        if i > 0:
            for _ in range(cfg.g - 1):
                run.extend(active)
            exited = [c for c in active if run.finished(c)]
            run.verify(exited)
            pool += exited
            active = [c for c in active if not run.finished(c)]
            if not active or len(pool) >= cfg.n:
                break
            if len(active) != cfg.n:
                active = tile(active, cfg.n)
        run.extend(active, to_end=last)
        run.verify(active)
        pool += [c for c in active if run.finished(c)]
        active = [c for c in active if not run.finished(c)]
        if not active or len(pool) >= cfg.n:
            break
        active = prune(active, keep, cfg.agg)
        i += 1
    return pool


def _uniform(run: _Run) -> list[Candidate]:
    cfg = run.cfg
    keep = cfg.n // cfg.m
    active = [Candidate() for _ in range(cfg.n)]
    pool: list[Candidate] = []
    i = 0
    while cfg.iterations is None or i < cfg.iterations:
        if cfg.iterations is not None and i == cfg.iterations - 1:
            run.extend(active, to_end=True)
        else:
            for _ in range(cfg.g):
                run.extend(active)
        run.verify(active)
        pool += [c for c in active if run.finished(c)]
        active = [c for c in active if not run.finished(c)]
        if not active or len(pool) >= cfg.n:
            break
        active = tile(prune(active, keep, cfg.agg), cfg.n)
        i += 1
    return pool


def _best_of_n(run: _Run) -> list[Candidate]:
    active = [Candidate() for _ in range(run.cfg.n)]
    while any(not run.finished(c) for c in active):
        run.extend(active)
    run.verify(active)
    return active


def _check(owner: str, problem, generator, verifier, cfg, rng) -> np.random.Generator:
    if not isinstance(getattr(problem, "prompt_tokens", None), (int, np.integer)):
        raise param_error(
            "problem",
            owner,
            "a problem with an integer prompt_tokens",
            type(problem).__name__,
            cls=TypeError,
        )
    for name, value, method, expected in (
        ("generator", generator, "step", "a Generator (with a step method)"),
        ("verifier", verifier, "score", "a Verifier (with a score method)"),
    ):
        if not callable(getattr(value, method, None)):
            raise param_error(name, owner, expected, type(value).__name__, cls=TypeError)
    if not isinstance(cfg, SearchConfig):
        raise param_error("cfg", owner, "a SearchConfig", type(cfg).__name__, cls=TypeError)
    if isinstance(rng, np.random.Generator):
        return rng
    seed = check_int("rng", owner, rng, low=0)
    return np.random.default_rng(seed)


def vg_search(
    problem: Any,
    generator: Any,
    verifier: Any,
    cfg: SearchConfig | None = None,
    rng: np.random.Generator | int = 0,
) -> SearchResult:
    """VG-Search of one problem (module docstring; the paper's VG-Search).

    Args:
        problem: any object with an integer ``prompt_tokens``, passed to the generator and
            verifier (e.g. :class:`vgsearch.ChainArithmetic`).
        generator: a :class:`vgsearch.Generator`; verifier: a :class:`vgsearch.Verifier`.
        cfg: the :class:`SearchConfig` (default ``SearchConfig()``).
        rng: a ``numpy.random.Generator`` (consumed) or a seed.

    NaN policy: the verifier's scores are used as given (a NaN score loses every comparison in
    the ranking of numpy's argsort); configuration fields refuse NaN.

    >>> from vgsearch import ChainArithmetic, NoisyPRM, NoisyStepGenerator
    >>> res = vg_search(ChainArithmetic(3, seed=1), NoisyStepGenerator(), NoisyPRM(),
    ...                 SearchConfig(n=8, m=2, g=3), rng=0)
    >>> len(res.completions), res.n_verifier_calls > 0, res.flops_ver > res.flops_gen > 0
    (8, True, True)
    """
    cfg = SearchConfig() if cfg is None else cfg
    rng = _check("vg_search", problem, generator, verifier, cfg, rng)
    run = _Run(problem, generator, verifier, cfg, rng)
    if cfg.m == 1:
        pool = _best_of_n(run)
    elif cfg.schedule == "official":
        pool = _official(run)
    else:
        pool = _uniform(run)
    return run.result(pool)


def beam_search(
    problem: Any,
    generator: Any,
    verifier: Any,
    cfg: SearchConfig | None = None,
    rng: np.random.Generator | int = 0,
) -> SearchResult:
    """Beam search with a PRM: :func:`vg_search` with ``g = 1`` (other fields of ``cfg`` kept).
    NaN policy: as :func:`vg_search`."""
    cfg = SearchConfig() if cfg is None else cfg
    if not isinstance(cfg, SearchConfig):
        raise param_error("cfg", "beam_search", "a SearchConfig", type(cfg).__name__, cls=TypeError)
    return vg_search(problem, generator, verifier, _replace(cfg, g=1), rng)


def best_of_n(
    problem: Any,
    generator: Any,
    verifier: Any,
    cfg: SearchConfig | None = None,
    rng: np.random.Generator | int = 0,
) -> SearchResult:
    """Best-of-N: ``cfg.n`` independent solutions, each scored once when finished, the answer
    of the best aggregated score (``m`` is ignored). NaN policy: as :func:`vg_search`."""
    cfg = SearchConfig() if cfg is None else cfg
    if not isinstance(cfg, SearchConfig):
        raise param_error("cfg", "best_of_n", "a SearchConfig", type(cfg).__name__, cls=TypeError)
    return vg_search(problem, generator, verifier, _replace(cfg, m=1), rng)


def _replace(cfg: SearchConfig, **changes: Any) -> SearchConfig:
    from dataclasses import replace

    return replace(cfg, **changes)
