import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer

from paperkit.testing import assert_param_error
from portrouter import (
    ROUTERBENCH_COST,
    ROUTERBENCH_PERF,
    ANNIndex,
    PORTRouter,
    SyntheticRouterBench,
    greedy_router,
    load_router_table,
    random_router,
    simulate_serving,
    split_budget,
    total_budget,
)
from portrouter.queries import DOMAINS, sample_queries

_HASH = HashingVectorizer(n_features=256, alternate_sign=False)


def bag_of_words(texts):
    """A cheap real text embedding (hashed word counts) for tests; the package uses MiniLM."""
    return _HASH.transform(texts).toarray().astype(np.float32)


def test_queries_are_distinct_templated_text():
    queries = sample_queries(12000, np.random.default_rng(0))
    assert len({q.text for q in queries}) == 12000
    assert {q.domain for q in queries} == set(range(len(DOMAINS)))
    assert len({q.template for q in queries}) == 48 * len(DOMAINS)
    assert all(30 <= len(d.frames) * len(d.topics) <= 60 for d in DOMAINS)


def test_calibrated_to_routerbench_and_deterministic():
    data = SyntheticRouterBench(1500, 500, seed=3).build(bag_of_words)
    d = np.concatenate([data.hist_d, data.test_d])
    g = np.concatenate([data.hist_g, data.test_g])
    np.testing.assert_allclose(g.mean(axis=0), ROUTERBENCH_COST, rtol=1e-9)
    np.testing.assert_allclose(d.mean(axis=0), ROUTERBENCH_PERF, atol=0.04)  # Bernoulli draws
    assert set(data.hist_text).isdisjoint(data.test_text)
    again = SyntheticRouterBench(1500, 500, seed=3).build(bag_of_words)
    np.testing.assert_array_equal(again.test_d, data.test_d)
    assert again.test_text == data.test_text
    other = SyntheticRouterBench(1500, 500, seed=4).build(bag_of_words)
    assert other.test_text != data.test_text
    sub = data.subset([1, 5])
    assert sub.models == (data.models[1], data.models[5]) and sub.test_g.shape == (500, 2)


def test_port_beats_greedy_and_random_on_the_synthetic_bench():
    """The paper's headline, in the loop: with budgets that bind, pricing beats greediness."""
    data = SyntheticRouterBench(2000, 1000, seed=1).build(bag_of_words)
    d, g, emb = data.test_d, data.test_g, data.test_emb
    budgets = split_budget(total_budget(g), data.hist_d.mean(axis=0), data.hist_g.mean(axis=0))
    index = ANNIndex("hnsw", dim=256, k=5)
    index.add(data.hist_emb)
    hist = (data.hist_d, data.hist_g)
    port = simulate_serving(PORTRouter(index, *hist, budgets, len(d)), d, g, emb, budgets)
    greedy = simulate_serving(greedy_router(index, *hist, budgets), d, g, emb, budgets)
    rand = simulate_serving(random_router(11), d, g, emb, budgets)
    assert port.perf > 1.5 * greedy.perf and port.perf > 1.5 * rand.perf
    assert port.throughput > greedy.throughput


def test_load_router_table(tmp_path):
    path = tmp_path / "bench.csv"
    path.write_text(
        "prompt,m1,m1|total_cost,m2,m2|total_cost,eval_name\n"
        "what is 2+2,1.0,0.0001,0.0,0.00002,math\n"
        "say hi,0.5,0.0002,1.0,0.00001,chat\n"
    )
    prompts, models, d, g = load_router_table(path)
    assert prompts == ["what is 2+2", "say hi"] and models == ["m1", "m2"]
    np.testing.assert_allclose(d, [[1.0, 0.0], [0.5, 1.0]])
    np.testing.assert_allclose(g, [[1e-4, 2e-5], [2e-4, 1e-5]])
    (tmp_path / "bad.csv").write_text("prompt,m1,m1|total_cost\nx,,0.1\n")
    assert_param_error(lambda: load_router_table(tmp_path / "bad.csv"), param="path")
    assert_param_error(lambda: load_router_table(tmp_path / "bench.json"), param="path")


def test_bad_sizes():
    assert_param_error(lambda: SyntheticRouterBench(0, 10), param="n_history")
    assert_param_error(lambda: SyntheticRouterBench(10, 10, n_models=12), param="n_models")


@pytest.mark.slow
def test_minilm_embeddings_are_unit_norm_and_semantic(tmp_path, monkeypatch):
    from portrouter import minilm_embedder

    monkeypatch.setenv("PORTROUTER_CACHE", str(tmp_path))
    embed = minilm_embedder()
    texts = [
        "Translate 'good morning' into French.",
        "How do you say 'good morning' in Spanish?",
        "Implement binary search over a sorted array in Rust.",
    ]
    e = embed(texts)
    assert e.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)
    assert e[0] @ e[1] > e[0] @ e[2]
    np.testing.assert_array_equal(embed(texts), e)  # from the cache
    assert len(list(tmp_path.glob("*.npy"))) == 1
