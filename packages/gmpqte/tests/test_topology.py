import math

import gudhi
import numpy as np
import pytest

from gmpqte import betti_curve, betti_entropy, cubical_diagrams, persistent_entropy, rips_diagrams


def test_persistent_entropy_closed_forms():
    # closed forms of -sum p ln p: two equal bars -> ln 2, one bar -> 0, n equal bars -> ln n
    assert persistent_entropy([[0.0, 2.0], [1.0, 3.0]]) == pytest.approx(math.log(2), abs=1e-12)
    assert persistent_entropy([[0.3, 0.9]]) == 0.0
    for n in (3, 7, 20):
        bars = np.column_stack([np.arange(n) * 0.1, np.arange(n) * 0.1 + 0.5])
        assert persistent_entropy(bars) == pytest.approx(math.log(n), abs=1e-12)
    assert persistent_entropy(np.zeros((0, 2))) == 0.0


def test_persistent_entropy_is_scale_invariant_and_below_ln_n():
    rng = np.random.default_rng(0)
    births = rng.random(12)
    bars = np.column_stack([births, births + rng.random(12)])
    pe = persistent_entropy(bars)
    for c in (1e-3, 2.5, 1e4):
        assert persistent_entropy(bars * c) == pytest.approx(pe, abs=1e-12)
    assert 0 < pe < math.log(12)


def _bump(n, width=2.0):
    yy, xx = np.mgrid[0:n, 0:n]
    c = (n - 1) / 2
    return np.exp(-((yy - c) ** 2 + (xx - c) ** 2) / (2 * width**2))


def _annulus(n=24, radius=7.0, width=1.2):
    yy, xx = np.mgrid[0:n, 0:n]
    c = (n - 1) / 2
    r = np.hypot(yy - c, xx - c)
    return np.exp(-((r - radius) ** 2) / (2 * width**2))


def test_one_peak_has_one_essential_bar_and_no_loop():
    d = cubical_diagrams(_bump(8))
    assert d[0].tolist() == [[0.0, 1.0]]  # the essential bar, closed at the filtration's end
    assert d[1].shape == (0, 2)


def test_annulus_has_one_prominent_loop_and_matches_gudhi():
    f = _annulus()
    d = cubical_diagrams(f)
    persistence = d[1][:, 1] - d[1][:, 0]
    assert (persistence > 0.5).sum() == 1
    # gudhi on the same input: sublevel filtration of 1 - normalised f
    g = 1 - (f - f.min()) / (f.max() - f.min())
    cc = gudhi.CubicalComplex(top_dimensional_cells=g)
    cc.compute_persistence(homology_coeff_field=2, min_persistence=0)
    for dim in (0, 1):
        ref = np.asarray(cc.persistence_intervals_in_dimension(dim)).reshape(-1, 2).copy()
        ref[np.isinf(ref[:, 1]), 1] = g.max()
        np.testing.assert_allclose(np.sort(d[dim], axis=0), np.sort(ref, axis=0), atol=1e-12)


def test_superlevel_differs_from_sublevel_and_constant_map_is_empty():
    f = _annulus(16, 5.0, 1.0)
    assert len(cubical_diagrams(f, superlevel=False)[1]) != len(cubical_diagrams(f)[1]) or not (
        np.allclose(cubical_diagrams(f, superlevel=False)[1], cubical_diagrams(f)[1])
    )
    d = cubical_diagrams(np.full((8, 8), 3.0))
    assert d[0].shape == (0, 2) and d[1].shape == (0, 2)


def test_cubical_diagrams_invariant_to_positive_affine_maps():
    f = np.random.default_rng(1).random((10, 10))
    a, b = cubical_diagrams(f), cubical_diagrams(4.0 * f + 2.0)
    for dim in (0, 1):
        np.testing.assert_allclose(np.sort(a[dim], axis=0), np.sort(b[dim], axis=0), atol=1e-12)


def test_betti_curve_equals_brute_force_count():
    rng = np.random.default_rng(2)
    births = rng.random(30) * 0.8
    bars = np.column_stack([births, births + rng.random(30) * 0.5])
    grid = np.linspace(0, 1, 100)
    brute = [sum(1 for b, d in bars if b <= eps < d) for eps in grid]  # alive: b <= eps < d
    assert betti_curve(bars, grid).tolist() == brute
    assert betti_curve(bars).tolist() == brute  # the default grid is the same 100 points


def test_betti_entropy_closed_form():
    # bars [0, 0.5) and [0, 1) on the grid {0, 0.25, 0.5, 0.75}: beta = 2, 2, 1, 1
    q = np.array([2, 2, 1, 1]) / 6
    expected = float(-(q * np.log(q)).sum())
    got = betti_entropy([[0.0, 0.5], [0.0, 1.0]], [0.0, 0.25, 0.5, 0.75])
    assert got == pytest.approx(expected, abs=1e-12)
    assert betti_entropy(np.zeros((0, 2))) == 0.0


def test_rips_circle_has_one_loop():
    theta = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    circle = np.column_stack([np.cos(theta), np.sin(theta)])
    d = rips_diagrams(circle)
    persistence = d[1][:, 1] - d[1][:, 0]
    assert (persistence > 0.5).sum() == 1
    assert len(d[0]) == 24 and np.isfinite(d[0]).all()
    assert d[0][:, 1].max() == pytest.approx(2.0, abs=1e-6)  # closed at the diameter
    assert rips_diagrams(np.ones((5, 3)))[0].shape == (0, 2)


def test_bad_diagram_is_refused():
    with pytest.raises(ValueError, match="'diagram'"):
        persistent_entropy([[1.0, 0.5]])
