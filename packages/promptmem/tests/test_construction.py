"""Part A: the exact construction memorises every data set, with the counted prompt length,
steps and bits (the counting argument of the paper's upper bound, Section 3)."""

import itertools
import math
import random

import pytest
import torch

from promptmem import (
    PrecisionError,
    PromptInterpreter,
    memorization_dataset,
    tradeoff_curve,
)
from promptmem.keys import contextual_key, key_bits, sequence_code, token_bits


def _random_dataset(rng: random.Random, seed: int):
    N = rng.randint(1, 8)
    vocab = rng.randint(2, 16)
    n = min(rng.randint(1, 200), vocab**N)
    X, Y = memorization_dataset(n, N, vocab=vocab, seed=seed)
    return X, Y, vocab


@pytest.mark.parametrize("seed", range(20))
def test_exact_recall_on_random_datasets(seed):
    # check 1: 20 random data sets (n <= 200, N <= 8, |V| <= 16), several k, 100% recall
    rng = random.Random(seed)
    X, Y, vocab = _random_dataset(rng, seed)
    n, N = Y.shape
    S = n * N
    interp = PromptInterpreter()
    # every query costs up to k steps: keep k moderate so the suite stays fast (k = S when small)
    ks = {1, 2, rng.randint(1, min(S, 64)), "sqrt"} | ({S} if S <= 200 else set())
    for k in sorted(ks, key=str):
        prompt = interp.build(X, Y, k, vocab=vocab)
        for i in range(n):
            y, steps = interp.run(prompt, X[i])
            assert y == Y[i].tolist()
            assert 1 <= steps <= prompt.group_size


@pytest.mark.parametrize("seed", range(10))
def test_accounting(seed):
    # check 2: m = ceil(nN/k) (no extra token: each token carries its own count), steps <= k,
    # m * s <= nN + k; with k = "sqrt": m <= ceil(sqrt(nN)) + 1 and s <= ceil(sqrt(nN))
    rng = random.Random(100 + seed)
    X, Y, vocab = _random_dataset(rng, seed)
    n, N = Y.shape
    S = n * N
    interp = PromptInterpreter()
    queries = rng.sample(range(n), min(n, 12))
    for k in (1, 3, rng.randint(1, S), S):
        prompt = interp.build(X, Y, k, vocab=vocab)
        assert interp.prompt_length == len(prompt) == math.ceil(S / k)
        assert interp.steps <= k and len(prompt) * interp.steps <= S + k
        q, b = key_bits(N, vocab), token_bits(vocab)
        assert interp.bits_per_token == k * (q + b)
        assert max(interp.run(prompt, X[i])[1] for i in queries) <= k
    prompt = interp.build(X, Y, "sqrt", vocab=vocab)
    root = math.isqrt(S - 1) + 1  # ceil(sqrt(S))
    assert len(prompt) <= root + 1 and prompt.steps <= root


def test_tradeoff_curve_matches_builds():
    X, Y = memorization_dataset(64, 4, vocab=8, seed=3)
    interp = PromptInterpreter()
    ks = [1, 2, 5, 16, 100, 256]
    for row in tradeoff_curve(64, 4, ks, vocab=8):
        prompt = interp.build(X, Y, row["k"], vocab=8)
        assert (row["m"], row["bits_per_token"]) == (len(prompt), prompt.bits_per_token)
        assert prompt.steps == row["s"]  # every group but the last is full
        assert row["m"] * row["s"] >= 256


def test_duplicates():
    # check 3: equal inputs with different targets are not memorisable; equal pairs are fine
    X = torch.tensor([[1, 2], [3, 0], [1, 2]])
    interp = PromptInterpreter()
    with pytest.raises(ValueError, match="'Y'"):
        interp.build(X, torch.tensor([[0, 1], [1, 1], [0, 0]]), 2)
    Y = torch.tensor([[0, 1], [1, 1], [0, 1]])
    prompt = interp.build(X, Y, 1)
    assert len(prompt) == 4  # 2 distinct inputs x 2 positions
    assert interp.run(prompt, X[2]) == ([0, 1], 1)


@pytest.mark.parametrize("N,vocab", [(1, 2), (2, 16), (4, 8), (8, 5)])
def test_float64_precision_threshold(N, vocab):
    # check 4: float64 raises PrecisionError exactly when k(q+b) > 52 * width; exact never
    n = min(30, vocab**N)
    X, Y = memorization_dataset(n, N, vocab=vocab, seed=1)
    field = key_bits(N, vocab) + token_bits(vocab)
    for width in (1, 2, 4):
        fp = PromptInterpreter("float64", width=width)
        for k in range(1, min(n * N, 52 * width // field + 3) + 1):  # up to past the threshold
            if k * field > 52 * width:
                with pytest.raises(PrecisionError):
                    fp.build(X, Y, k, vocab=vocab)
            else:
                prompt = fp.build(X, Y, k, vocab=vocab)
                assert all(isinstance(w, float) for t in prompt.tokens for w in t.payload)
                assert all(fp.run(prompt, X[i])[0] == Y[i].tolist() for i in range(n))
    exact = PromptInterpreter("exact")
    prompt = exact.build(X, Y, n * N, vocab=vocab)
    assert exact.run(prompt, X[-1])[0] == Y[-1].tolist()


def test_real_valued_inputs_and_collision():
    # check 5 (real tokens): distinct keys <a, vec X> for generic a; a collision is refused
    X, Y = memorization_dataset(40, 3, vocab=5, kind="lowrank", rank=2, d0=4, seed=0)
    interp = PromptInterpreter()
    prompt = interp.build(X, Y, "sqrt")
    assert prompt.vocab is None and prompt.key_bits == 64 + 2
    assert all(interp.run(prompt, X[i])[0] == Y[i].tolist() for i in range(40))
    # two different inputs whose float64 keys coincide: 1e-10 is far below half an ulp of the
    # 1e10-sized term, so <a, vec x> rounds to the same float64 number
    X2 = torch.zeros(2, 1, 2, dtype=torch.float64)
    X2[:, 0, 0] = 1e10
    X2[1, 0, 1] = 1e-10
    with pytest.raises(ValueError, match="real-valued collision"):
        interp.build(X2, torch.tensor([[0], [1]]), 1)
    # the same input twice with the same target is a duplicate pair, not a collision
    assert len(interp.build(X2[[0, 0]], torch.tensor([[1], [1]]), 1)) == 1


@pytest.mark.parametrize("N,vocab", [(1, 7), (2, 5), (3, 4), (4, 3)])
def test_keys_distinct_and_order_preserving(N, vocab):
    # check 5 (tokens), exhaustively over V^N: distinct sequences, distinct keys; the integer
    # code orders sequences as the contextual key kappa(x) = sum_j x_j |V|^-(j+1) does
    seqs = list(itertools.product(range(vocab), repeat=N))
    kappas = [contextual_key(list(x), vocab) for x in seqs]
    codes = [sequence_code(list(x), vocab) for x in seqs]
    assert len(set(kappas)) == len(set(codes)) == len(seqs)
    assert sorted(range(len(seqs)), key=kappas.__getitem__) == sorted(
        range(len(seqs)), key=codes.__getitem__
    )


def test_unseen_input_returns_minus_one_and_mode_mismatch():
    X, Y = memorization_dataset(10, 2, vocab=4, seed=2)
    interp = PromptInterpreter()
    prompt = interp.build(X, Y, 3)
    seen = {tuple(x) for x in X.tolist()}
    unseen = next([a, b] for a in range(4) for b in range(4) if (a, b) not in seen)
    assert interp.run(prompt, unseen)[0] == [-1, -1]
    with pytest.raises(ValueError, match="'prompt'"):
        PromptInterpreter("float64").run(prompt, X[0])
    with pytest.raises(ValueError, match="'x'"):
        interp.run(prompt, [1, 2, 3])


@pytest.mark.parametrize(
    "call",
    [
        lambda X, Y: PromptInterpreter().build(X, Y, 0),
        lambda X, Y: tradeoff_curve(4, 2, [0]),
        lambda X, Y: tradeoff_curve(0, 2, [1]),
        lambda X, Y: tradeoff_curve(4, 0, [1]),
        lambda X, Y: tradeoff_curve(4, 2, [1], vocab=1),
    ],
)
def test_errors(call):
    # check 10 (construction side): k < 1, n < 1, N < 1, vocab < 2 -> ValueError
    X, Y = memorization_dataset(4, 2, vocab=3)
    with pytest.raises(ValueError):
        call(X, Y)
