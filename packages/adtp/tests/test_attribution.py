import pytest
import torch

from adtp.attribution import (
    attention_importance,
    integrated_gradients,
    normalise_importance,
    quadrature,
)


def _smooth_model(D=6, C=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    w1 = torch.randn(D, 8, generator=g, dtype=torch.float64)
    w2 = torch.randn(8, C, generator=g, dtype=torch.float64)

    def f(e, mask=None):
        h = torch.tanh(e @ w1)
        if mask is not None:
            h = h * mask[..., None]
        return h.mean(1) @ w2

    return f


def test_ig_completeness_gauss_legendre():
    # completeness axiom (Sundararajan et al. 2017): sum_i IG_i = F(E) - F(E'); 128 nodes
    f = _smooth_model()
    e = torch.randn(3, 7, 6, dtype=torch.float64)
    base = torch.randn(3, 7, 6, dtype=torch.float64) * 0.3
    y = torch.tensor([0, 2, 1])
    ig = integrated_gradients(f, e, y, baseline=base, steps=128, method="gausslegendre")
    gap = f(e).gather(1, y[:, None])[:, 0] - f(base).gather(1, y[:, None])[:, 0]
    assert torch.allclose(ig.sum(1), gap, rtol=1e-3, atol=0)


def test_ig_riemann_converges_to_completeness():
    f = _smooth_model(seed=1)
    e = torch.randn(2, 5, 6, dtype=torch.float64)
    y = torch.tensor([1, 0])
    gap = f(e).gather(1, y[:, None])[:, 0] - f(torch.zeros_like(e)).gather(1, y[:, None])[:, 0]
    err = [
        (integrated_gradients(f, e, y, baseline="zeros", steps=m).sum(1) - gap).abs().max()
        for m in (8, 64)
    ]
    assert err[1] < err[0] / 4  # right Riemann sum: O(1/m)


@pytest.mark.parametrize("steps", [1, 3, 32])
def test_ig_linear_is_exact(steps):
    # F(E) = <W, E>: the gradient is W everywhere, so IG_i = sum_d (E - E')_id W_id for any m
    W = torch.randn(5, 4, dtype=torch.float64)

    def f(e):
        s = (e * W).sum((1, 2))
        return torch.stack([s, 2 * s], -1)

    e = torch.randn(3, 5, 4, dtype=torch.float64)
    pad = torch.randn(4, dtype=torch.float64)
    keep = torch.zeros(3, 5, dtype=torch.bool)
    keep[:, 0] = True
    ig = integrated_gradients(
        f,
        e,
        torch.tensor([0, 1, 0]),
        baseline="pad",
        pad_embedding=pad,
        keep_mask=keep,
        steps=steps,
        internal_batch=2,
    )
    scale = torch.tensor([1.0, 2.0, 1.0], dtype=torch.float64)[:, None]
    expected = ((e - pad) * W).sum(-1) * scale
    expected[:, 0] = 0  # kept positions: baseline = input, no attribution
    assert torch.allclose(ig, expected, atol=1e-12, rtol=0)


def test_ig_matches_captum():
    captum = pytest.importorskip("captum.attr")
    f = _smooth_model(seed=2)
    e = torch.randn(2, 5, 6, dtype=torch.float64)
    y = torch.tensor([1, 2])
    ours = integrated_gradients(f, e, y, baseline="zeros", steps=16, method="riemann_right")
    ref = captum.IntegratedGradients(f).attribute(
        e, torch.zeros_like(e), target=y, n_steps=16, method="riemann_right"
    )
    assert torch.allclose(ours, ref.sum(-1), atol=1e-10)


def test_ig_on_the_encoder_is_complete(tiny):
    model, x = tiny
    e = model.embed(x.input_ids).detach()
    f = lambda emb, m: model.forward_embeddings(emb, m)["logits"]  # noqa: E731
    ig = integrated_gradients(
        f,
        e,
        x.labels,
        attention_mask=x.attention_mask,
        steps=64,
        method="gausslegendre",
        pad_embedding=model.pad_embedding.detach(),
    )
    base = torch.where(x.attention_mask[..., None], model.pad_embedding.detach().expand_as(e), e)
    gap = (f(e, x.attention_mask) - f(base, x.attention_mask)).gather(1, x.labels[:, None])[:, 0]
    assert torch.allclose(ig.sum(1), gap, rtol=1e-3, atol=1e-9)
    assert bool((ig[~x.attention_mask] == 0).all())


def test_quadrature_integrates_polynomials():
    a, w = quadrature(5, "gausslegendre")
    assert abs(float((w * a**9).sum()) - 0.1) < 1e-12  # exact up to degree 2m-1


def test_uniform_attention_gives_constant_importance():
    mask = torch.tensor([[True] * 5 + [False] * 3])
    maps = []
    for _ in range(3):
        a = torch.zeros(1, 4, 8, 8)
        a[..., :5] = 1 / 5
        maps.append(a)
    s = attention_importance(maps, mask)
    assert torch.allclose(s[0, :5], torch.full((5,), s[0, 0].item()))
    assert float(s[0, 0]) == pytest.approx(3 * 4 * 5 / 5)  # layers * heads * valid queries / n
    assert bool((s[0, 5:] == 0).all())


def test_normalise_importance_sums_to_one_over_the_mask():
    ig = torch.tensor([[0.5, -1.0, 2.0, 4.0]])
    mask = torch.tensor([[True, True, True, False]])
    g = normalise_importance(ig, mask)
    assert torch.allclose(g, torch.tensor([[0.2, 0.0, 0.8, 0.0]]))
    assert torch.allclose(normalise_importance(ig, mask, absolute=True).sum(), torch.tensor(1.0))
    assert bool((normalise_importance(-ig.abs(), mask) == 0).all())


def test_baseline_shape_mismatch_is_refused():
    with pytest.raises(ValueError, match="'baseline'"):
        integrated_gradients(
            lambda e: e.sum(1),
            torch.randn(2, 3, 4),
            torch.tensor([0, 1]),
            baseline=torch.zeros(2, 3, 5),
        )
    with pytest.raises(ValueError, match="'steps'"):
        integrated_gradients(
            lambda e: e.sum(1),
            torch.randn(2, 3, 4),
            torch.tensor([0, 1]),
            baseline="zeros",
            steps=0,
        )
