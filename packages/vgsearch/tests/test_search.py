"""VG-Search against a naive beam search, its special cases, the verifier-call counts of the
schedules, the token accounting, pruning and determinism."""

import numpy as np
import pytest

from vgsearch import (
    ChainArithmetic,
    NoisyPRM,
    NoisyStepGenerator,
    SearchConfig,
    Step,
    beam_search,
    best_of_n,
    make_problems,
    vg_search,
)
from vgsearch.search import Candidate, prune, tile
from vgsearch.steps import reasoning_values

GEN = NoisyStepGenerator()
PRM = NoisyPRM("strong")


def naive_beam_search(problem, generator, verifier, n, m, rng):
    """The reference: n candidates, one step each, score all, keep the top n/m (numpy's
    ascending argsort, last n/m, in their order), tile to n, repeat until n have finished."""
    active, pool = [[] for _ in range(n)], []
    while True:
        unfinished = [c for c in active if not (c and c[-1].is_final)]
        new = generator.step([problem] * len(unfinished), unfinished, rng)
        for c, s in zip(unfinished, new, strict=True):
            c.append(s)
        scores = verifier.score([problem] * len(active), active)
        last = [s[-1] for s in scores]
        done = [i for i, c in enumerate(active) if c[-1].is_final]
        pool += [(active[i], scores[i]) for i in done]
        left = [i for i in range(len(active)) if i not in done]
        if not left or len(pool) >= n:
            break
        order = np.argsort([last[i] for i in left])[-(n // m) :]
        kept = [active[left[j]] for j in sorted(order)]
        active = [list(c) for c in (kept * (n // len(kept) + 1))[:n]]
    pool = pool[:n]
    best = int(np.argmax([s[-1] for _, s in pool]))
    return [c for c, _ in pool], pool[best][0][-1].value


def values(res):
    return [reasoning_values(c) for c in res.completions]


@pytest.mark.parametrize("level", [1, 3, 5])
@pytest.mark.parametrize("n,m", [(8, 2), (16, 4)])
def test_g1_schedules_and_naive_beam_search_agree(level, n, m):
    # check 1: identical completions under one RNG stream
    p = ChainArithmetic(level, seed=11)
    official = vg_search(p, GEN, PRM, SearchConfig(n=n, m=m, g=1), np.random.default_rng(5))
    uniform = vg_search(
        p, GEN, PRM, SearchConfig(n=n, m=m, g=1, schedule="uniform"), np.random.default_rng(5)
    )
    bs = beam_search(p, GEN, PRM, SearchConfig(n=n, m=m, g=3), np.random.default_rng(5))
    ref, answer = naive_beam_search(p, GEN, PRM, n, m, np.random.default_rng(5))
    assert values(official) == values(uniform) == values(bs) == [reasoning_values(c) for c in ref]
    assert official.answer == answer
    assert official.n_verifier_calls == uniform.n_verifier_calls == n * p.L


@pytest.mark.parametrize("g", [13, 20])
def test_uniform_with_g_at_least_L_is_best_of_n(g):
    # check 2: same completions as BoN(n) under one stream, one verifier call per candidate
    for p in make_problems(2, seed=3):
        cfg = SearchConfig(n=8, m=4, g=g, schedule="uniform")
        res = vg_search(p, GEN, PRM, cfg, np.random.default_rng(9))
        bon = best_of_n(p, GEN, PRM, cfg, np.random.default_rng(9))
        assert values(res) == values(bon)
        assert res.n_verifier_calls == bon.n_verifier_calls == 8
        assert res.answer == bon.answer


@pytest.mark.parametrize("g", [1, 2, 3, 6])
def test_official_call_count(g):
    # check 3: n (1 + (L - 1) / g) calls when g divides L - 1 (L = 13 at level 5)
    p = ChainArithmetic(5, seed=2)
    res = vg_search(p, GEN, PRM, SearchConfig(n=8, m=4, g=g), 0)
    assert (p.L - 1) % g == 0
    assert res.n_verifier_calls == 8 * (1 + (p.L - 1) // g)


@pytest.mark.parametrize("level,g", [(1, 1), (1, 5), (5, 13), (2, 7)])
def test_uniform_call_count(level, g):
    # check 3: n L / g calls when g divides L
    p = ChainArithmetic(level, seed=4)
    assert p.L % g == 0
    res = vg_search(p, GEN, PRM, SearchConfig(n=8, m=2, g=g, schedule="uniform"), 1)
    assert res.n_verifier_calls == 8 * p.L // g


def test_official_scores_candidates_finishing_in_the_extension():
    # L = 5, g = 3: step 1 verified (n calls), the n/m kept extend to step 3, branch to step 4
    # (n calls), the n/m kept extend 2 steps and finish unverified-then-scored (n/m calls)
    p = ChainArithmetic(1, seed=0)
    res = vg_search(p, GEN, PRM, SearchConfig(n=8, m=4, g=3), 0)
    assert res.n_verifier_calls == 8 + 8 + 2
    assert len(res.completions) == 8  # padded by tiling the 2 finished ones
    assert all(len(reasoning_values(c)) == p.L for c in res.completions)


class RecordingPRM(NoisyPRM):
    """Records every scored prefix's token length."""

    def __init__(self):
        super().__init__("strong")
        self.lengths = []

    def score(self, problems, prefixes):
        self.lengths += [sum(s.n_tokens for s in prefix) for prefix in prefixes]
        return super().score(problems, prefixes)


class RecordingGen(NoisyStepGenerator):
    def __init__(self):
        super().__init__()
        self.tokens = 0

    def step(self, problems, prefixes, rng, to_end=False):
        out = super().step(problems, prefixes, rng, to_end)
        self.tokens += sum(s.n_tokens for s in out)
        return out


@pytest.mark.parametrize("schedule", ["official", "uniform"])
@pytest.mark.parametrize("g", [1, 2, 4])
def test_token_and_flops_accounting(schedule, g):
    # check 4: gen tokens = generated step lengths; ver tokens = sum of scored prefixes + prompt
    p = ChainArithmetic(3, seed=8)
    gen, prm = RecordingGen(), RecordingPRM()
    cfg = SearchConfig(n=8, m=4, g=g, schedule=schedule)
    res = vg_search(p, gen, prm, cfg, 0)
    assert res.gen_tokens == gen.tokens
    assert res.ver_tokens == sum(prm.lengths) + p.prompt_tokens * len(prm.lengths)
    assert res.n_verifier_calls == len(prm.lengths)
    assert res.flops_gen == 2 * cfg.p_gen * (p.prompt_tokens + gen.tokens)
    assert res.flops_ver == 2 * cfg.p_ver * res.ver_tokens
    cached = vg_search(
        p, gen, prm, SearchConfig(n=8, m=4, g=g, schedule=schedule, verifier_cache=True), 0
    )
    assert cached.gen_tokens == res.gen_tokens and cached.ver_tokens < res.ver_tokens


def test_verifier_cache_counts_only_new_tokens():
    # check 4: with a cache, beam search reads the prompt once and every token of each lineage
    # once: n copies share the parent's read tokens, so the total is prompt + the new step
    # tokens of every scored candidate
    p = ChainArithmetic(2, seed=1)
    res = vg_search(p, GEN, PRM, SearchConfig(n=4, m=2, g=1, verifier_cache=True), 0)
    new_per_call = sum(p.step_tokens)  # every candidate is scored once per step, 4 per step
    assert res.ver_tokens == p.prompt_tokens + 4 * new_per_call


def test_prune_keeps_n_over_m_in_order_and_tile_copies():
    # check 8: exactly n/m kept; duplicates are independent objects
    cands = [Candidate([Step("", i, 10, False)], [s]) for i, s in enumerate([0.2, 0.9, 0.5, 0.9])]
    kept = prune(cands, 2, "last")
    assert [c.steps[0].value for c in kept] == [1, 3]  # tie at 0.9: both kept, in order
    assert [c.steps[0].value for c in prune(cands, 1, "last")] == [3]  # tie to the later
    copies = tile(kept, 8)
    assert [c.steps[0].value for c in copies] == [1, 3] * 4
    copies[0].steps.append(Step("", 99, 5, True))
    copies[0].scores[0] = 0.0
    assert len(copies[2].steps) == 1 and copies[2].scores == [0.9] and len(kept[0].steps) == 1
    assert len({id(c) for c in copies}) == 8 and all(c is not k for c in copies for k in kept)


@pytest.mark.parametrize("g", [1, 2, 3])
def test_search_keeps_n_over_m_between_verifications(g):
    # check 8 in the search: every generator call after the first verification sees n or n/m
    calls = []

    class Spy(NoisyStepGenerator):
        def step(self, problems, prefixes, rng, to_end=False):
            calls.append(len(prefixes))
            return super().step(problems, prefixes, rng, to_end)

    p = ChainArithmetic(5, seed=3)
    vg_search(p, Spy(), PRM, SearchConfig(n=16, m=4, g=g), 0)
    assert set(calls) <= {16, 4} and calls[0] == 16
    if g > 1:
        assert 4 in calls


def test_m1_is_best_of_n_under_either_schedule():
    p = ChainArithmetic(4, seed=6)
    bon = best_of_n(p, GEN, PRM, SearchConfig(n=8, m=4), 3)
    for schedule in ("official", "uniform"):
        res = vg_search(p, GEN, PRM, SearchConfig(n=8, m=1, g=2, schedule=schedule), 3)
        assert values(res) == values(bon) and res.n_verifier_calls == 8


def test_iterations_sample_to_the_end_in_the_last():
    p = ChainArithmetic(5, seed=1)
    res = vg_search(p, GEN, PRM, SearchConfig(n=8, m=4, g=2, iterations=3), 0)
    # iterations 0, 1 verify after steps 1 and 3; iteration 2 extends 1 step, then samples to end
    assert all(len(reasoning_values(c)) == p.L for c in res.completions)
    assert all(len(s) == p.L for s in res.scores)
    assert res.n_verifier_calls == 8 * 3


def test_same_seed_same_result():
    # check 11: determinism
    p = ChainArithmetic(4, seed=5)
    cfg = SearchConfig(n=16, m=4, g=2)
    a, b = vg_search(p, GEN, PRM, cfg, 7), vg_search(p, GEN, PRM, cfg, 7)
    assert a == b
    c = vg_search(p, GEN, PRM, cfg, 8)
    assert [[s.text for s in x] for x in c.completions] != [
        [s.text for s in x] for x in a.completions
    ]


def _accuracy(problems, cfg, prm, search, seed=0):
    hits = [
        search(p, GEN, prm, cfg, np.random.default_rng([seed, i])).answer == p.answer
        for i, p in enumerate(problems)
    ]
    return np.mean(hits)


def test_perfect_verifier_beam_search_beats_best_of_n():
    # check 5: eta = 0, q_detect = 1 and p_err < 1: beam search >= BoN on the same 200 streams
    problems = [ChainArithmetic(5, seed=s) for s in range(200)]
    perfect = NoisyPRM("strong", eta=0.0, q_detect=1.0)
    cfg = SearchConfig(n=4, m=2)
    bs = _accuracy(problems, cfg, perfect, beam_search)
    bon = _accuracy(problems, cfg, perfect, best_of_n)
    assert bs >= bon
    assert bs > 0.9  # the reference: with 4 children per step an undetected error is rare


def test_useless_verifier_is_chance_selection():
    # check 6: beta = 0: beam search accuracy = single-sample accuracy within 3 sigma
    problems = [ChainArithmetic(3, seed=s) for s in range(200)]
    useless = NoisyPRM("strong", beta=0.0, eta=1.0)
    bs = _accuracy(problems, SearchConfig(n=8, m=2), useless, beam_search)
    single = _accuracy(problems, SearchConfig(n=1, m=1), useless, best_of_n, seed=1)
    # the single-sample accuracy in closed form: prod over steps of (1 - p_err)
    exact = np.mean([np.prod([1 - GEN.p_err(p.level, op) for op, _ in p.ops]) for p in problems])
    sigma = np.sqrt(exact * (1 - exact) / len(problems))
    assert abs(single - exact) < 3 * sigma
    assert abs(bs - exact) < 3 * sigma
