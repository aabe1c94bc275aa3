import math

import numpy as np
import pytest

from paperkit.testing import assert_param_error
from portrouter import (
    ANNIndex,
    PORTRouter,
    batch_split_router,
    greedy_router,
    knn_router,
    offline_opt,
    predictor_router,
    random_router,
    simulate_serving,
    solve_dual,
)


def _world(seed=0, n_hist=600, n=400, M=3, p=16):
    """Clustered embeddings; quality and cost depend on the cluster, as for real queries."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((8, p))

    def draw(k):
        c = rng.integers(0, 8, size=k)
        e = centres[c] + 0.3 * rng.standard_normal((k, p))
        return e / np.linalg.norm(e, axis=1, keepdims=True), c

    skill = rng.random((8, M))
    price = np.linspace(1.0, 3.0, M) * 1e-3

    def outcomes(c):
        d = (rng.random((len(c), M)) < skill[c]).astype(float)
        return d, price * rng.uniform(0.5, 1.5, size=(len(c), M))

    (he, hc), (te, tc) = draw(n_hist), draw(n)
    (hd, hg), (td, tg) = outcomes(hc), outcomes(tc)
    return he, hd, hg, te, td, tg


def _index(he, k=5):
    index = ANNIndex("hnsw", dim=he.shape[1], k=k, seed=0)
    index.add(he)
    return index


def test_learning_phase_length_and_a_single_optimisation():
    he, hd, hg, te, td, tg = _world()
    router = PORTRouter(_index(he), hd, hg, np.ones(3), len(te), eps=0.05, seed=1)
    assert router.n_learn == math.ceil(0.05 * len(te)) == 20
    choices = np.concatenate([router.route_batch(te[i : i + 7]) for i in range(0, len(te), 7)])
    assert router.n_optimisations == 1 and router.gamma.shape == (3,)
    assert sum(len(x) for x in router._seen_d) == 20  # features of exactly ⌈εN⌉ queries stored
    assert choices.min() >= 0 and choices.max() <= 3  # 3 = not routed, in the learning phase only
    assert np.all(choices[20:] < 3)


def test_zero_prices_route_like_greedy_perf():
    he, hd, hg, te, td, tg = _world(1)
    index = _index(he)
    router = PORTRouter(index, hd, hg, np.ones(3), len(te), eps=0.05, alpha=1.0)
    router.route_batch(te[:21])  # the learning phase (20 queries), then the one optimisation
    router.gamma = np.zeros(3)  # γ = 0: no price on cost
    greedy = greedy_router(index, hd, hg, np.ones(3), "perf")
    np.testing.assert_array_equal(router.route_batch(te[21:]), greedy.route_batch(te[21:]))


def test_single_model_with_unlimited_budget_serves_everything_after_learning():
    he, hd, hg, te, td, tg = _world(2, M=1)
    router = PORTRouter(_index(he), hd, hg, np.array([1e9]), len(te), eps=0.025)
    res = simulate_serving(router, td, tg, te, np.array([1e9]))
    learn = router.n_learn
    assert np.all(res.choices[learn:] == 0)
    served = res.choices == 0
    assert res.throughput == served.sum() and res.perf == pytest.approx(td[served, 0].sum())
    assert res.acc == pytest.approx(res.perf / res.throughput)


def _all_routers(he, hd, hg, budgets, n):
    index = _index(he)
    return {
        "port": PORTRouter(index, hd, hg, budgets, n, eps=0.05),
        "port_skip": PORTRouter(index, hd, hg, budgets, n, eps=0.05, allow_skip=True),
        "random": random_router(3),
        "greedy_perf": greedy_router(index, hd, hg, budgets, "perf"),
        "greedy_cost": greedy_router(index, hd, hg, budgets, "cost"),
        "knn_perf": knn_router(he, hd, hg, budgets, "perf"),
        "knn_cost": knn_router(he, hd, hg, budgets, "cost"),
        "batch_split": batch_split_router(index, hd, hg, budgets, n),
        "predictor": predictor_router(he, hd, hg, budgets, "perf", max_iter=30),
    }


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", [0, 1])
def test_budgets_are_never_exceeded_and_offline_opt_bounds_every_method(seed):
    he, hd, hg, te, td, tg = _world(seed)
    budgets = np.array([0.05, 0.1, 0.15])
    lp_value, choices = offline_opt(td, tg, budgets)
    for name, router in _all_routers(he, hd, hg, budgets, len(te)).items():
        res = simulate_serving(router, td, tg, te, budgets, segment=64)
        assert np.all(res.per_model_cost <= budgets + 1e-12), name
        assert res.perf <= lp_value + 1e-9, name
    rounded = simulate_serving(choices, td, tg, None, budgets)
    assert np.all(rounded.per_model_cost <= budgets + 1e-12) and rounded.perf <= lp_value + 1e-9


def test_determinism_under_seed():
    he, hd, hg, te, td, tg = _world(4)
    runs = [
        simulate_serving(
            PORTRouter(_index(he), hd, hg, np.full(3, 0.1), len(te), seed=5),
            td,
            tg,
            te,
            np.full(3, 0.1),
        ).choices
        for _ in range(2)
    ]
    np.testing.assert_array_equal(*runs)


def test_bad_input():
    he, hd, hg, te, td, tg = _world(5)
    index = _index(he)
    ok = dict(index=index, hist_d=hd, hist_g=hg, budgets=np.ones(3), n_queries=10)
    assert_param_error(lambda: PORTRouter(**{**ok, "budgets": -np.ones(3)}), param="budgets")
    assert_param_error(lambda: PORTRouter(**{**ok, "budgets": np.ones(2)}), param="budgets")
    assert_param_error(lambda: PORTRouter(**ok, eps=0.0), param="eps")
    assert_param_error(lambda: PORTRouter(**ok, eps=1.0), param="eps")
    assert_param_error(lambda: PORTRouter(**ok, alpha="max"), param="alpha")
    nan = hd.copy()
    nan[3, 1] = np.nan
    assert_param_error(lambda: PORTRouter(**{**ok, "hist_d": nan}), param="hist_d")
    small = ANNIndex("exact", dim=he.shape[1], k=5)
    small.add(he[:3])
    assert_param_error(lambda: PORTRouter(**{**ok, "index": small}), param="index")
    router = PORTRouter(**ok)
    assert_param_error(lambda: router.route_batch(np.ones((2, 5))), param="q")
    assert_param_error(lambda: simulate_serving(router, td, tg, te[:5], np.ones(3)), param="emb")


def test_infinite_budgets_are_refused_before_any_solver_runs():
    """budgets = inf used to pass the checks and fail inside scipy's LP."""
    he, hd, hg, te, td, tg = _world(6)
    index = _index(he)
    inf = np.full(3, np.inf)
    assert_param_error(lambda: PORTRouter(index, hd, hg, inf, len(te)), param="budgets")
    assert_param_error(lambda: solve_dual(hd, hg, inf, 0.1, 1.0), param="budgets")
    assert_param_error(lambda: offline_opt(td, tg, inf), param="budgets")
    assert_param_error(lambda: simulate_serving(random_router(3), td, tg, te, inf), param="budgets")


def test_history_rows_must_match_the_index():
    he, hd, hg, te, td, tg = _world(7)
    index = _index(he)
    assert_param_error(lambda: PORTRouter(index, hd[:50], hg[:50], np.ones(3), 10), param="hist_d")
    assert_param_error(lambda: greedy_router(index, hd[:50], hg[:50], np.ones(3)), param="hist_d")
