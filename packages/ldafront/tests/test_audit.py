"""ScalingLawLDA: the 7-model fit, the frontier prediction and the LDA rule (the paper's audit)."""

import numpy as np
import pytest

from ldafront import ScalingLawLDA, SyntheticLDA


@pytest.fixture(scope="module")
def fitted():
    pop = SyntheticLDA.make(0)
    X, y, A, _ = pop.sample(2500, 1)
    ev = pop.sample(20_000, 2)[:3]
    aud = ScalingLawLDA(epochs=100, n_boot=40, random_state=0)
    return aud.fit(X, y, A, scales=[150, 300, 600, 1200], model="logistic", eval_data=ev)


def test_seven_models_and_law_parameters(fitted):
    kinds = [r["kind"] for r in fitted.small_]
    assert kinds == ["unconstrained"] * 4 + ["penalized"] * 3
    pen = fitted.small_[4:]
    # the penalised models cut the gap increasingly (lambda from 25/50/75 % targets)
    assert fitted.small_[3]["dp"] > pen[0]["dp"] > pen[1]["dp"] > pen[2]["dp"]
    assert 0.2 < fitted.V_ < 2.0 and fitted.V_mode_ == "penalized fit"
    assert fitted.eval_scores_.shape == (7, 20_000)


def test_predict_frontier_is_the_law(fitted):
    L0, D0, V = fitted.law_at(16_000)
    deltas = np.array([0.0, 0.05, D0, D0 + 0.1])
    np.testing.assert_allclose(
        fitted.predict_frontier(16_000, deltas),
        L0 + np.clip(D0 - deltas, 0, None) ** 2 / (2 * V),
        rtol=0,
        atol=1e-15,
    )


def test_lda_rule(fitted):
    L0, D0, V = fitted.law_at(16_000)
    # the unconstrained optimum itself: the flat frontier buys sqrt(2 V tau) of gap
    res = fitted.lda_test(16_000, L0, D0)
    assert res["delta_star"] == pytest.approx(D0 - np.sqrt(2 * V * fitted.tau), abs=1e-12)
    assert res["exists"] == (np.sqrt(2 * V * fitted.tau) >= fitted.eps)
    # a model already paying much loss for a small gap: no LDA
    gap = 0.3 * D0
    res = fitted.lda_test(16_000, L0 + (D0 - gap) ** 2 / (2 * V), gap)
    assert not res["exists"] and res["margin"] < 0


def test_constructive_lda_with_scores(fitted):
    pop = SyntheticLDA.make(0)
    _, y, A, eta = pop.sample(20_000, 5)
    res = fitted.lda_test(16_000, 0.4, 0.19, scores=eta, y=y, A=A)
    c = res["constructive"]
    assert c["delta"] == pytest.approx(abs(eta[A == 1].mean() - eta[A == 0].mean()) - 0.02)
    assert c["loss_increase"] > 0 and isinstance(c["within_tau"], bool)
    with pytest.raises(ValueError, match="'y'"):
        fitted.lda_test(16_000, 0.4, 0.19, scores=eta, A=A)


def test_documented_value_errors():
    X, y, A, _ = SyntheticLDA.make(0).sample(500, 0)
    aud = ScalingLawLDA(n_small_unconstrained=3, epochs=5, n_boot=20)
    with pytest.raises(ValueError, match="'scales'.*at least 3"):
        aud.fit(X, y, A, scales=[100, 200])
    with pytest.raises(ValueError, match="'scales'.*positive"):
        aud.fit(X, y, A, scales=[-100, 100, 200])
    with pytest.raises(ValueError, match="'A'.*binary"):
        aud.fit(X, y, A * 2, scales=[50, 100, 200])
    with pytest.raises(ValueError, match="fitted"):
        aud.predict_frontier(1000, [0.1])


def test_deterministic():
    X, y, A, _ = SyntheticLDA.make(0).sample(800, 0)
    runs = [
        ScalingLawLDA(n_small_unconstrained=3, epochs=20, n_boot=20)
        .fit(X, y, A, scales=[100, 200, 400], model="logistic")
        .summary()
        for _ in range(2)
    ]
    assert runs[0] == {**runs[1], "train_seconds": runs[0]["train_seconds"]}


def test_law_from_audit_refits_the_same_law(fitted):
    loss = np.array([r["loss"] for r in fitted.small_])
    dp = np.array([r["dp"] for r in fitted.small_])
    law = fitted.law_from_audit(16_000, loss, dp)
    assert (law["L0"], law["D0"], law["V"]) == pytest.approx(fitted.law_at(16_000), abs=1e-12)
    assert law["L_small"] == loss[3] and law["D_small"] == dp[3]
    # a lower loss at the largest scale lowers the extrapolated L0
    lower = fitted.law_from_audit(16_000, loss - np.array([0, 0, 0, 0.01, 0, 0, 0]), dp)
    assert lower["L0"] < law["L0"]


def test_repeats_v_per_scale_and_floor():
    pop = SyntheticLDA.make(0)
    X, y, A, _ = pop.sample(2500, 1)
    ev = pop.sample(5000, 2)[:3]
    scales = [150, 300, 600, 1200]
    aud = ScalingLawLDA(epochs=60, n_boot=20, repeats=2, v_per_scale=True, L0_floor=0.45)
    aud.fit(X, y, A, scales=scales, model="logistic", eval_data=ev)
    # 2 repeats x 4 scales x (1 unconstrained + 3 penalised)
    assert len(aud.small_) == 32 and {r["repeat"] for r in aud.small_} == {0, 1}
    assert len(aud.V_at_) == 4 and all(v is not None and v > 0 for v in aud.V_at_)
    # V(s) is the power law of log V through the per-scale values
    from ldafront.powerlaw import fit_power_law, power_law

    params = fit_power_law(np.array(scales, float), np.log(aud.V_at_))
    assert aud.law_at(5000)[2] == pytest.approx(np.exp(power_law(5000, *params)), rel=1e-12)
    # the floor holds the asymptote: L0 at any scale stays above it
    assert aud.L_params_[0] >= 0.45 - 1e-12 and aud.law_at(1e9)[0] >= 0.45 - 1e-12
    # the law is fitted on the repeat means
    first = [r["loss"] for r in aud.small_ if r["scale"] == 150 and r["cut"] == 0]
    assert len(first) == 2 and aud.summary()["repeats"] == 2
    loss = np.array([r["loss"] for r in aud.small_])
    dp = np.array([r["dp"] for r in aud.small_])
    mean_last = np.mean([r["loss"] for r in aud.small_ if r["scale"] == 1200 and r["cut"] == 0])
    assert aud.law_from_audit(5000, loss, dp)["L_small"] == pytest.approx(mean_last)
