"""Splatting and covariance (paper Sec. 3.2-3.3): closed forms, invariants, the three paths."""

import math

import pytest
import torch

from gaussianfusion.gaussians import Gaussians2D, cell_centres, covariance, init_uniform, splat
from paperkit.testing import assert_close, gradcheck64

EXT = ((-8.0, 8.0), (-8.0, 8.0))


def _one(mu, scales, theta, dtype=torch.float64):
    g = init_uniform(1, (1, 1), EXT, 2, 2, 1, dtype=dtype)
    return g.replace(
        mean=torch.tensor([[mu]], dtype=dtype),
        log_scale=torch.tensor([[scales]], dtype=dtype).log(),
        rotation=torch.tensor([[theta]], dtype=dtype),
        opacity_logit=torch.tensor([[50.0]], dtype=dtype),  # o = 1 - 2e-22
    )


def _random(b, n, seed, dtype=torch.float64, f=3, ext=EXT, spread=0.6):
    gen = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.rand(*s, generator=gen, dtype=dtype)  # noqa: E731
    (x0, x1), _ = ext
    g = init_uniform(b, (1, n), ext, 2, 2, f, dtype=dtype)
    g = g.replace(
        mean=(r(b, n, 2) - 0.5) * (x1 - x0) * 1.1,
        log_scale=(r(b, n, 2) - 0.5) * 2 * spread,
        rotation=r(b, n) * 2 * math.pi,
        opacity_logit=r(b, n) * 4 - 2,
    )
    return g, torch.randn(b, n, f, generator=gen, dtype=dtype)


def test_one_gaussian_matches_the_closed_form_and_its_integral():
    # closed form: G(p) = exp(-1/2 d^T Sigma^-1 d) with Sigma from its definition (Sec. 3.2)
    mu, (sx, sy), theta = (0.25, -0.75), (1.3, 0.6), 0.4  # (0.25, -0.75) is a cell centre
    g = _one(mu, (sx, sy), theta)
    out = splat(g, torch.ones(1, 1, 1, dtype=torch.float64), (32, 32), EXT)[0, 0]
    rot = torch.tensor(
        [[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]],
        dtype=torch.float64,
    )
    sigma = rot @ torch.diag(torch.tensor([sx**2, sy**2], dtype=torch.float64)) @ rot.T
    d = cell_centres((32, 32), EXT, dtype=torch.float64) - torch.tensor(mu, dtype=torch.float64)
    expect = torch.exp(-0.5 * (d @ torch.linalg.inv(sigma) * d).sum(-1)).reshape(32, 32)
    assert_close(out, expect, rtol=0, atol=1e-6)
    assert out.max() == pytest.approx(1.0, abs=1e-12)  # the mean sits on a cell centre
    # integral: sum * cell area -> 2 pi sx sy for a Gaussian well inside the extent
    assert float(out.sum()) * 0.5 * 0.5 == pytest.approx(2 * math.pi * sx * sy, rel=0.01)


def test_rotation_by_a_right_angle_swaps_the_scales():
    a = _one((0.0, 0.0), (2.0, 0.5), math.pi / 2)
    b = _one((0.0, 0.0), (0.5, 2.0), 0.0)
    assert_close(covariance(a), covariance(b), rtol=0, atol=1e-12)


def test_covariance_is_symmetric_positive_definite():
    g, _ = _random(4, 50, seed=0, spread=3.0)
    s = covariance(g)
    assert_close(s, s.transpose(-1, -2), rtol=0, atol=0)
    assert bool((torch.linalg.eigvalsh(s) > 0).all())


def test_splat_is_linear_in_values_and_invariant_to_permutation():
    g, v = _random(2, 12, seed=1)
    w = torch.randn_like(v)
    f = lambda vals: splat(g, vals, (20, 24), EXT)  # noqa: E731
    assert_close(f(2.0 * v - 3.0 * w), 2.0 * f(v) - 3.0 * f(w), rtol=1e-12, atol=1e-12)
    perm = torch.randperm(12, generator=torch.Generator().manual_seed(0))
    gp = Gaussians2D(*(getattr(g, k)[:, perm] for k in g.__dataclass_fields__))
    assert_close(splat(gp, v[:, perm], (20, 24), EXT), f(v), rtol=1e-12, atol=1e-12)


def test_chunked_equals_dense():
    g, v = _random(2, 37, seed=2, dtype=torch.float32)
    dense = splat(g, v, (30, 30), EXT)
    for chunk in (1, 5, 37, 100):
        assert_close(splat(g, v, (30, 30), EXT, chunk=chunk), dense, rtol=0, atol=1e-6)


@pytest.mark.parametrize("r", [1.5, 3.0, 4.0])
def test_culled_obeys_the_truncation_bound(r):
    # |culled - dense| <= exp(-r^2/2) sum_i o_i |v_i| over the Gaussians that drop the cell
    g, v = _random(2, 40, seed=3, spread=1.2)
    dense = splat(g, v, (32, 32), EXT)
    culled = splat(g, v, (32, 32), EXT, cutoff=r)
    pts = cell_centres((32, 32), EXT, dtype=torch.float64)
    from gaussianfusion.gaussians import mahalanobis_sq

    dropped = (mahalanobis_sq(pts.expand(2, -1, -1), g) > r * r).double()  # (B, N, P)
    bound = math.exp(-r * r / 2) * torch.einsum(
        "bnp,bnf->bfp", dropped, g.opacity[..., None] * v.abs()
    )
    excess = (culled - dense).abs().reshape(2, 3, -1) - bound
    assert float(excess.max()) <= 1e-12
    assert float((culled - dense).abs().max()) > 0  # the cut-off does drop terms


def test_culled_matches_dense_at_4p5_sigma():
    g, v = _random(2, 40, seed=4, spread=0.8)
    v = v.abs() + 0.1
    dense = splat(g, v, (32, 32), EXT)
    culled = splat(g, v, (32, 32), EXT, cutoff=4.5, chunk=7)
    assert_close(culled, dense, rtol=1e-4, atol=1e-4 * float(dense.abs().max()))


def test_culled_scales_with_the_window_not_the_grid():
    # a small Gaussian far outside the grid contributes nothing, and huge ones are clamped
    g, v = _random(1, 5, seed=5, spread=4.0)
    g = g.replace(mean=g.mean + torch.tensor([100.0, 0.0], dtype=torch.float64))
    assert_close(
        splat(g, v, (16, 16), EXT, cutoff=3.0), splat(g, v, (16, 16), EXT), rtol=0, atol=1e-12
    )


def test_normalised_map_is_a_distribution_with_an_empty_class():
    g, _ = _random(2, 6, seed=6, spread=0.3)
    probs = torch.softmax(torch.randn(2, 6, 5, dtype=torch.float64), -1)
    out = splat(g, probs, (40, 40), ((-30.0, 30.0), (-30.0, 30.0)), normalize=True)
    assert_close(out.sum(1), torch.ones(2, 40, 40, dtype=torch.float64), rtol=0, atol=1e-12)
    assert float(out[:, 0].max()) == pytest.approx(1.0, abs=1e-6)  # far from every Gaussian


@pytest.mark.parametrize("cutoff", [None, 10.0])
def test_gradcheck_every_property(cutoff):
    g, v = _random(1, 3, seed=7, ext=((-3.0, 3.0), (-3.0, 3.0)))

    def f(mean, log_scale, rotation, opacity_logit, values):
        gg = g.replace(
            mean=mean, log_scale=log_scale, rotation=rotation, opacity_logit=opacity_logit
        )
        return splat(gg, values, (6, 6), ((-3.0, 3.0), (-3.0, 3.0)), cutoff=cutoff)

    assert gradcheck64(f, g.mean, g.log_scale, g.rotation, g.opacity_logit, v)


def test_init_uniform_layout():
    g = init_uniform(3, (4, 2), ((-8.0, 8.0), (0.0, 4.0)), 5, 6, 7)
    assert g.mean.shape == (3, 8, 2) and g.explicit.shape == (3, 8, 5)
    assert g.implicit.shape == (3, 8, 6) and g.semantic.shape == (3, 8, 7)
    assert_close(g.mean[0, :2], torch.tensor([[-6.0, 1.0], [-6.0, 3.0]]), rtol=0, atol=1e-6)
    assert_close(g.log_scale, torch.full((3, 8, 2), math.log(2.0)), rtol=0, atol=1e-6)
    assert_close(g.opacity, torch.full((3, 8), 0.5), rtol=0, atol=0)


@pytest.mark.parametrize("bad", [((-1.0, -1.0), (0.0, 1.0)), ((0.0, 1.0), (2.0, 1.0)), -3.0])
def test_non_positive_extent_is_refused(bad):
    g, v = _random(1, 2, seed=8)
    with pytest.raises(ValueError, match="'extent'"):
        splat(g, v, (4, 4), bad)


def test_nan_means_and_mismatched_batch_are_refused():
    g, v = _random(2, 3, seed=9)
    with pytest.raises(ValueError, match="'g'"):
        splat(g.replace(mean=g.mean.clone().fill_(float("nan"))), v, (4, 4), EXT)
    with pytest.raises(ValueError, match="'values'"):
        splat(g, v[:1], (4, 4), EXT)
    with pytest.raises(ValueError, match="'g'"):
        splat(g.replace(rotation=g.rotation[:1]), v, (4, 4), EXT)
