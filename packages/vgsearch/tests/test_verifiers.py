"""The stand-in PRMs: NoisyPRM's formula, determinism and delayed, persistent detection;
LearnedPRM's ranking of correct over wrong prefixes."""

import math

import numpy as np
import pytest

from vgsearch import ChainArithmetic, LearnedPRM, NoisyPRM, NoisyStepGenerator, Step, make_problems
from vgsearch.task import MODULUS


def prefix(values):
    return [Step("", v, 20, False) for v in values]


def test_scores_are_deterministic_per_prefix():
    # check 10: re-scoring a prefix, alone or in another batch, gives the same scores
    p = ChainArithmetic(4, seed=2)
    prm = NoisyPRM("weak", seed=3)
    vals = list(p.values[:5])
    vals[2] = (vals[2] + 1) % MODULUS
    a = prm.score([p], [prefix(vals)])[0]
    b = prm.score([p, p], [prefix(vals[:3]), prefix(vals)])
    assert a == b[1] and a[:3] == b[0]  # a shared prefix gets the same scores
    assert NoisyPRM("weak", seed=4).score([p], [prefix(vals)])[0] != a


def test_formula_without_noise():
    # s_j = sigmoid(beta d_j): +1 before detection; q_detect = 1 detects at the first error
    p = ChainArithmetic(3, seed=0)
    prm = NoisyPRM("strong", beta=1.5, eta=0.0, q_detect=1.0)
    vals = list(p.values[:4])
    vals[1] = (vals[1] + 2) % MODULUS
    up, down = 1 / (1 + math.exp(-1.5)), 1 / (1 + math.exp(1.5))
    assert prm.score([p], [prefix(vals)])[0] == pytest.approx([up, down, down, down], abs=1e-12)
    assert NoisyPRM("strong", q_detect=0.0, eta=0.0).score([p], [prefix(vals)])[0] == pytest.approx(
        [1 / (1 + math.exp(-2.0))] * 4
    )


def test_detection_is_delayed_and_persists():
    # the first step j >= k at which the error is caught is geometric(q_detect); never undone
    prm = NoisyPRM("strong", eta=0.0, q_detect=0.4)
    delays = []
    for s in range(3000):
        p = ChainArithmetic(5, seed=s)
        vals = list(p.values)
        vals[0] = (vals[0] + 1) % MODULUS  # wrong from step 0
        d = [x < 0.5 for x in prm.score([p], [prefix(vals)])[0]]
        first = d.index(True) if any(d) else len(d)
        assert all(d[first:])  # persistent
        delays.append(first)
    delays = np.array(delays)
    # P(caught at step 0) = q, P(not caught in L = 13 steps) = (1 - q)^13
    q = 0.4
    assert abs(np.mean(delays == 0) - q) < 3 * np.sqrt(q * (1 - q) / 3000)
    assert abs(np.mean(delays == 1) - q * (1 - q)) < 3 * np.sqrt(0.24 * 0.76 / 3000)


def test_noise_level():
    # eta xi_j with xi_j ~ N(0, 1): logit(s_j) - beta has mean 0 and sd eta over many prefixes
    prm = NoisyPRM("strong", beta=0.0, eta=0.7)
    logits = []
    for s in range(2000):
        p = ChainArithmetic(1, seed=s)
        logits += [math.log(x / (1 - x)) for x in prm.score([p], [prefix(p.values)])[0]]
    logits = np.array(logits)
    assert abs(logits.mean()) < 3 * 0.7 / np.sqrt(len(logits))
    assert abs(logits.std() - 0.7) < 0.03


def test_learned_prm_ranks_correct_prefixes_higher():
    from sklearn.metrics import roc_auc_score

    gen = NoisyStepGenerator(temperature=1.2)
    prm = LearnedPRM(misread=0.05).fit(make_problems(20, seed=1), gen, samples=8, seed=0)
    rng = np.random.default_rng(5)
    scores, labels = [], []
    for p in make_problems(10, seed=2):
        for chunk in gen.step([p] * 4, [[] for _ in range(4)], rng, to_end=True):
            s = prm.score([p], [[chunk]])[0]
            scores.append(s[-1])
            labels.append(chunk.value == p.answer)
    assert 0 < np.mean(labels) < 1
    assert roc_auc_score(labels, scores) > 0.8


def test_learned_prm_must_be_fitted():
    with pytest.raises(ValueError, match="fit"):
        LearnedPRM().score([ChainArithmetic(1)], [prefix([1])])
