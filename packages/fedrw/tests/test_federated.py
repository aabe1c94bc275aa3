import numpy as np
import pytest

from fedrw import make_duplicated_corpus, run_federated_lm

SMALL = {"emb": 8, "hidden": 16, "batch": 8}


@pytest.fixture(scope="module")
def corpus():
    return make_duplicated_corpus(clients=2, dup_rate=0.3, n_chunks=24, seed=0)


def test_training_is_deterministic_under_a_seed(corpus):
    """Check 11 (trajectory): the same seed gives the same perplexities, another seed not."""
    a = run_federated_lm("fedrw", corpus, rounds=2, seed=1, **SMALL)
    b = run_federated_lm("fedrw", corpus, rounds=2, seed=1, **SMALL)
    c = run_federated_lm("fedrw", corpus, rounds=2, seed=2, **SMALL)
    assert np.array_equal(a.test_ppl, b.test_ppl) and not np.array_equal(a.test_ppl, c.test_ppl)
    assert np.all(np.isfinite(a.test_ppl)) and a.test_ppl[-1] < 102  # below uniform guessing


def test_bytes_are_counted_and_psi_only_for_global_methods(corpus):
    none = run_federated_lm("none", corpus, rounds=1, seed=0, **SMALL)
    glob = run_federated_lm("global_dedup", corpus, rounds=1, seed=0, **SMALL)
    assert none.preprocess_bytes == 0 and none.preprocess_seconds == 0
    assert glob.preprocess_bytes > 0 and glob.preprocess_seconds > 0
    models = [m for m in none.transcript if m.kind == "model"]
    updates = [m for m in none.transcript if m.kind == "update"]
    assert len(models) == len(updates) == 2
    n_params = (updates[0].nbytes) // 4
    assert models[0].nbytes == 10 + 4 * n_params  # round header + float32 parameters
    assert none.bytes_total == none.train_bytes == sum(m.nbytes for m in none.transcript)


def test_alpha_zero_fedrw_equals_no_dedup(corpus):
    """FedRW with alpha = 0 trains exactly like no deduplication (weights 1, same batches)."""
    a = run_federated_lm("fedrw", corpus, rounds=1, alpha=0.0, seed=0, **SMALL)
    b = run_federated_lm("none", corpus, rounds=1, seed=0, **SMALL)
    assert np.allclose(a.test_ppl, b.test_ppl, rtol=1e-6, atol=0)


def test_unknown_method_is_refused(corpus):
    with pytest.raises(ValueError, match="'method'"):
        run_federated_lm("dedup", corpus, rounds=1)
