"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``): n % m != 0, g < 1, m < 1, an unknown aggregation or
schedule, an unseen difficulty bucket."""

import numpy as np

import vgsearch
from paperkit.testing import BadInputs, Call, fresh
from vgsearch import (
    AdaptiveGranularity,
    ChainArithmetic,
    LearnedPRM,
    NoisyPRM,
    NoisyStepGenerator,
    SearchConfig,
    make_problems,
)

PROBLEM = ChainArithmetic(1, seed=0)
GEN = NoisyStepGenerator()
PRM = NoisyPRM("strong")
ROWS = [
    {"n": 4, "g": g, "bucket": b, "acc": a, "flops": f}
    for g, b, a, f in [(1, 0, 0.9, 10.0), (2, 0, 0.8, 6.0), (1, 1, 0.4, 10.0), (2, 1, 0.5, 6.0)]
]
PROBE = np.array([0.2, 0.5, 0.7, 0.9])


def _rng():
    return fresh(lambda: np.random.default_rng(0))


def _search_call(fn):
    return Call(
        fn,
        problem=PROBLEM,
        generator=GEN,
        verifier=PRM,
        cfg=SearchConfig(n=4, m=2, g=2),
        rng=_rng(),
        bad={
            "problem": [object(), "problem"],
            "generator": [object()],
            "verifier": [object()],
            "cfg": [{"n": 4}, 3],
            "rng": [-1, "seed", 1.5],
        },
    )


SUITE = BadInputs(
    vgsearch,
    [
        _search_call(vgsearch.vg_search),
        _search_call(vgsearch.beam_search),
        _search_call(vgsearch.best_of_n),
        Call(
            SearchConfig,
            n=8,
            m=4,
            g=2,
            iterations=3,
            schedule="uniform",
            agg="min",
            temperature=0.8,
            p_gen=1.5e9,
            p_ver=7e9,
            verifier_cache=True,
            max_steps=64,
            bad={
                "n": [0, 6, 10**9],
                "m": [0, 3],
                "g": [0, -2],
                "iterations": [0],
                "temperature": [-0.1],
                "p_ver": [-1.0],
                "max_steps": [0],
            },
        ),
        Call(
            vgsearch.evaluate,
            problems=make_problems(1),
            cfg=SearchConfig(n=4, m=2),
            generator=GEN,
            verifier=PRM,
            seed=0,
            bad={"problems": [[], "abc", 3], "cfg": [[], [SearchConfig()], 3], "seed": [-1]},
        ),
        Call(
            vgsearch.aggregate_scores,
            scores=[0.9, 0.5],
            agg="prod",
            bad={"scores": [[[0.5]], "0.5"]},
        ),
        Call(
            vgsearch.weighted_majority,
            answers=[1, 2, 1],
            scores=np.array([0.5, 0.2, 0.4]),
            shapes={"scores": "3"},
            bad={"answers": [[[1], [2], [1]], "abc"]},
        ),
        Call(vgsearch.majority_vote, answers=[1, 2, 1], bad={"answers": [3, [{}, {}]]}),
        Call(
            ChainArithmetic,
            level=2,
            seed=1,
            length=9,
            bad={"level": [0, 6], "seed": [-1], "length": [0, 10**5]},
        ),
        Call(
            vgsearch.make_problems,
            n_per_level=1,
            seed=0,
            bad={"n_per_level": [0, 10**7], "seed": [-3]},
        ),
        Call(
            NoisyStepGenerator,
            temperature=0.8,
            base=0.08,
            level_slope=0.25,
            call={"problems": [PROBLEM], "prefixes": [[]], "rng": _rng(), "to_end": False},
            method="step",
            bad={
                "temperature": [-1.0],
                "base": [1.5, -0.1],
                "level_slope": [-1.0],
                "prefixes": [[[], []]],
                "rng": [0, "rng"],
            },
        ),
        Call(
            NoisyPRM,
            quality="weak",
            beta=2.0,
            eta=0.5,
            q_detect=0.9,
            seed=0,
            call={"problems": [PROBLEM], "prefixes": [[]]},
            method="score",
            bad={
                "beta": [-1.0],
                "eta": [-0.5],
                "q_detect": [1.5, -0.1],
                "seed": [-1],
                "prefixes": [[[], []]],
            },
        ),
        Call(
            LearnedPRM,
            misread=0.05,
            C=1.0,
            seed=0,
            call={"problems": make_problems(1), "generator": GEN, "samples": 4, "seed": 0},
            method="fit",
            bad={
                "misread": [0.6, -0.1],
                "C": [0.0],
                "seed": [-1],
                "problems": [[]],
                "generator": [object()],
                "samples": [0, 10**6],
            },
        ),
        Call(
            AdaptiveGranularity,
            n_buckets=3,
            call={"calib_table": ROWS, "probe": PROBE},
            method="fit",
            bad={"n_buckets": [0], "calib_table": [[], "rows", [{"n": 4}], {"n": 4}]},
            accepts={"probe": {"dtype"}},
        ),
        Call(
            AdaptiveGranularity,
            name="AdaptiveGranularity.choose",
            n_buckets=3,
            prepare=lambda ada: ada.fit(ROWS),
            call={"n": 4, "bucket": 1},
            method="choose",
            bad={"n": [0, 16], "bucket": [7, -1]},
        ),
        Call(
            AdaptiveGranularity,
            name="AdaptiveGranularity.difficulty_bucket",
            n_buckets=3,
            prepare=lambda ada: ada.fit(ROWS, probe=PROBE),
            call={"first_step_scores": np.array([0.5, 0.6])},
            method="difficulty_bucket",
        ),
    ],
    exempt={
        "Generator": "a typing Protocol (the interface a generator implements), not callable",
        "Verifier": "a typing Protocol (the interface a verifier implements), not callable",
        "Step": "a plain frozen record that generators build; it computes nothing",
        "SearchResult": "the record vg_search returns; built only by the search",
    },
)
test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
