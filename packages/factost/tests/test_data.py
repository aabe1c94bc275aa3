"""The synthetic domain suite: period, spatial coupling, splits; the real statsmodels series."""

import numpy as np
import pytest

from factost import make_domain_suite, make_st_domain, real_series
from factost.data import KINDS


def _deseasonalised(values):
    hour_of_week = np.arange(len(values)) % 168
    out = values.astype(float).copy()
    for h in range(168):
        out[hour_of_week == h] -= out[hour_of_week == h].mean(0)
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_signal_has_the_daily_period(kind):
    d = make_st_domain(kind, 20, 24 * 28, seed=1)
    x = d.values - d.values.mean(0)
    power = np.abs(np.fft.rfft(x, axis=0)).mean(1)
    freqs = np.fft.rfftfreq(len(x))
    assert 1 / freqs[1:][power[1:].argmax()] == pytest.approx(d.period)


@pytest.mark.parametrize("kind", KINDS)
def test_neighbours_correlate_more_than_random_pairs(kind):
    d = make_st_domain(kind, 30, 24 * 28, seed=2)
    corr = np.corrcoef(_deseasonalised(d.values).T)
    src, dst = d.edge_index.numpy()
    neighbours = corr[src, dst].mean()
    pairs = corr[np.triu_indices(30, 1)].mean()
    assert neighbours > pairs + 0.05


def test_suite_and_splits():
    suite = make_domain_suite(days=10)
    assert {k: d.n_nodes for k, d in suite.items()} == {
        "traffic": 40,
        "solar": 30,
        "air": 50,
        "bike": 60,
    }
    d = suite["air"]
    T = 240
    assert (
        d.span("train") == (0, 168) and d.span("val") == (168, 192) and d.span("test") == (192, T)
    )
    assert d.span("shots", 0.1) == (151, 168)
    x, y, tf = d.windows(12, 4, "test")
    assert x.shape == (T - 192 - 3, 50, 12) and y.shape[1:] == (50, 4)
    assert np.allclose(y[0].numpy().T, d.values[192:196])  # first target starts the span
    assert np.allclose(x[0].numpy().T, d.values[180:192])  # its inputs reach back
    assert np.allclose(tf[0].numpy(), d.time_feat[191])
    assert ((tf[:, 0] >= 0) & (tf[:, 0] < 1)).all()


def test_generator_is_deterministic_under_seed():
    a, b = make_st_domain("bike", 10, 100, seed=3), make_st_domain("bike", 10, 100, seed=3)
    assert np.array_equal(a.values, b.values) and np.array_equal(a.coords, b.coords)
    assert not np.array_equal(a.values, make_st_domain("bike", 10, 100, seed=4).values)


def test_real_series_are_finite_float_series():
    series = real_series()
    assert {k: v.size for k, v in series.items()} == {
        "co2": 2284,
        "sunspots": 309,
        "elnino": 732,
        "nile": 100,
    }
    assert all(np.isfinite(v).all() and v.dtype == np.float32 for v in series.values())
