"""Readouts: logistic regression and the dopamine-gated anti-Hebbian rule."""

import numpy as np

from flyolf import train_readout


def test_dopamine_rule_depresses_the_other_classes_synapses():
    x = np.array([[2, 0, 0], [0, 3, 0], [0, 0, 1]])
    y = np.array([0, 1, 2])
    r = train_readout(x, y, kind="dopamine", eta=0.5)
    # odor 0 fired KC 0: MBONs 1 and 2 lose half of KC 0's weight, MBON 0 keeps it
    expected = np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.5], [0.5, 0.5, 1.0]])
    np.testing.assert_allclose(r.weights, expected)
    assert r.predict(x).tolist() == [0, 1, 2]


def test_logistic_readout_separates_separable_codes():
    rng = np.random.default_rng(0)
    protos = (rng.random((4, 100)) < 0.1) * 3.0
    y = np.repeat(np.arange(4), 10)
    x = rng.poisson(protos[y] + 0.1)
    r = train_readout(x, y)
    assert r.score(rng.poisson(protos[y] + 0.1), y) >= 0.95


def test_evaluate_reads_both_readouts_from_the_same_counts():
    from flyolf import CircuitConfig, make_odor_task
    from flyolf.experiment import evaluate

    task = make_odor_task(n_classes=3, n_train=5, n_test=5, noise=0.0, seed=1)
    res = evaluate(CircuitConfig(n_kc=300, w_pk=0.0019), task, seed=3)
    assert 1 / 3 < res["acc"] <= 1 and 1 / 3 < res["acc_dopamine"] <= 1  # chance is 1/3
    assert 0 < res["coding"] < 1 and res["spikes_per_responding_kc"] >= 1
    assert -1 <= res["separation"] <= 1 and -1 <= res["pn_separation"] <= 1
