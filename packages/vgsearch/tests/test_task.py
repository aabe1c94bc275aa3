"""The stand-in task and generator: problem construction and the per-step error rate."""

import numpy as np
import pytest

from vgsearch import ChainArithmetic, NoisyStepGenerator, make_problems
from vgsearch.steps import reasoning_values
from vgsearch.task import MODULUS, apply_op


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_problem_is_a_chain_of_operations(level):
    p = ChainArithmetic(level, seed=4)
    assert 3 + 2 * level == p.L and 0 <= p.a0 <= 20
    a = p.a0
    for (op, c), v in zip(p.ops, p.values, strict=True):
        a = apply_op(a, op, c)
        assert v == a and 0 <= v < MODULUS
    assert all(15 <= t <= 60 for t in p.step_tokens)
    assert ChainArithmetic(level, seed=4).values == p.values  # seeded


@pytest.mark.parametrize("level,op_index", [(1, 0), (5, 0), (3, 1)])
def test_error_rate_matches_p_err(level, op_index):
    # check 10: the empirical error rate of one step matches p_err within 3 sigma
    gen = NoisyStepGenerator(temperature=1.2)
    p = next(
        q
        for q in make_problems(30, seed=2)
        if q.level == level and q.ops[0][0] == ("+", "-", "*")[op_index]
    )
    draws = 20_000
    steps = gen.step([p] * draws, [[] for _ in range(draws)], np.random.default_rng(0))
    wrong = np.mean([s.value != p.values[0] for s in steps])
    rate = gen.p_err(level, p.ops[0][0])
    assert abs(wrong - rate) < 3 * np.sqrt(rate * (1 - rate) / draws)


def test_p_err_grows_with_level_and_temperature():
    cold, hot = NoisyStepGenerator(0.4), NoisyStepGenerator(1.2)
    for op in "+-*":
        assert cold.p_err(1, op) < cold.p_err(5, op) < hot.p_err(5, op)


def test_errors_propagate_from_the_stated_value():
    p = ChainArithmetic(2, seed=0)
    perfect = NoisyStepGenerator(base=0.0)
    wrong_start = [
        type(s)("", (p.values[0] + 1) % MODULUS, 20, False)
        for s in [perfect.step([p], [[]], np.random.default_rng(0))[0]]
    ]
    nxt = perfect.step([p], [wrong_start], np.random.default_rng(0))[0]
    assert nxt.value == apply_op(wrong_start[0].value, *p.ops[1]) != p.values[1]


def test_to_end_chunk_holds_every_remaining_step():
    p = ChainArithmetic(3, seed=1)
    gen = NoisyStepGenerator()
    first = gen.step([p], [[]], np.random.default_rng(1))
    chunk = gen.step([p], [first], np.random.default_rng(1), to_end=True)[0]
    assert chunk.is_final and chunk.reasoning_steps == p.L - 1
    assert chunk.n_tokens == sum(p.step_tokens[1:]) and chunk.lengths == p.step_tokens[1:]
    assert len(reasoning_values(first + [chunk])) == p.L


def test_complete_prefix_is_refused():
    p = ChainArithmetic(1, seed=1)
    gen = NoisyStepGenerator()
    done = gen.step([p], [[]], np.random.default_rng(1), to_end=True)
    with pytest.raises(ValueError, match="'prefixes'"):
        gen.step([p], [done], np.random.default_rng(1))
