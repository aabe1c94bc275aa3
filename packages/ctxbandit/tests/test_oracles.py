import itertools

import numpy as np
import pytest

from ctxbandit import Oracle, ReductionBandit, finite_oracle, topk_oracle


def brute_topk(mask, k, theta):
    """Brute force over all C(n_avail, k) actions, ties by the lexicographically first set."""
    best = min(itertools.combinations(np.flatnonzero(mask), k), key=lambda c: theta[list(c)].sum())
    a = np.zeros(mask.size)
    a[list(best)] = 1
    return a


def test_topk_equals_brute_force_on_50_random_cases():
    rng = np.random.default_rng(0)
    for _ in range(50):
        d, k = 9, int(rng.integers(1, 5))
        mask = rng.random(d) < 0.7
        mask[rng.choice(d, k, replace=False)] = True  # at least k available
        theta = rng.standard_normal(d)
        a = topk_oracle({"mask": mask, "k": k}, theta)
        np.testing.assert_array_equal(a, brute_topk(mask, k, theta))
        assert a @ theta == pytest.approx(brute_topk(mask, k, theta) @ theta, abs=1e-12)


def test_topk_ties_go_to_the_lowest_index():
    a = topk_oracle({"mask": np.ones(4, bool), "k": 2}, np.zeros(4))
    np.testing.assert_array_equal(a, [1, 1, 0, 0])


def test_batch_matches_single_calls_and_counts():
    rng = np.random.default_rng(1)
    oracle = Oracle("topk")
    contexts = [{"mask": rng.random(6) < 0.8, "k": 2} for _ in range(7)]
    for c in contexts:
        c["mask"][:2] = True
    thetas = rng.standard_normal((5, 6))
    X = oracle.batch(contexts, thetas)
    assert oracle.n_calls == 35
    for m in range(5):
        for n in range(7):
            np.testing.assert_array_equal(X[m, n], brute_topk(contexts[n]["mask"], 2, thetas[m]))


def test_finite_oracle_is_the_argmin_row():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((20, 4))
    for _ in range(20):
        theta = rng.standard_normal(4)
        np.testing.assert_array_equal(finite_oracle(A, theta), A[np.argmin(A @ theta)])
    X = Oracle("finite").batch([A, A[:3]], np.eye(4))
    np.testing.assert_array_equal(X[2, 1], A[:3][np.argmin(A[:3, 2])])


def test_oracle_with_wrong_signature_is_a_type_error():
    with pytest.raises(TypeError, match="'oracle'"):
        ReductionBandit(d=3, oracle=lambda context: np.zeros(3))
    with pytest.raises(TypeError, match="'oracle'"):
        ReductionBandit(d=3, oracle=lambda a, b, c: np.zeros(3))


def test_enumeration_counts_all_actions():
    actions = Oracle("topk").actions({"mask": np.array([1, 1, 0, 1, 1], bool), "k": 2})
    assert actions.shape == (6, 5) and np.all(actions.sum(1) == 2) and np.all(actions[:, 2] == 0)
