"""Correctness check 1: the VQ-EMA quantiser (Sec. 3.1; van den Oord et al., 2017)."""

import torch

from bcvlr import VQEmbeddingEMA
from paperkit.testing import assert_close


def _vq(**kw):
    torch.manual_seed(0)
    return VQEmbeddingEMA(num_codebooks=2, num_embs=8, emb_dim=4, num_latents=3, **kw)


def test_outputs_are_the_nearest_codes_by_brute_force():
    vq = _vq().eval()
    x = torch.randn(6, vq.dim, generator=torch.Generator().manual_seed(1))
    z_q, loss, perplexity, idx = vq(x)
    assert idx.shape == (6, 2, 3)
    # brute force over every (row, codebook, latent): the layout is (N, E, L) per row
    xs = x.reshape(6, 2, 4, 3)
    zs = z_q.reshape(6, 2, 4, 3)
    for b in range(6):
        for n in range(2):
            for l in range(3):
                v = xs[b, n, :, l]
                d = ((vq.embedding[n] - v) ** 2).sum(-1)
                k = int(d.argmin())
                assert int(idx[b, n, l]) == k
                assert_close(zs[b, n, :, l], vq.embedding[n, k], rtol=1e-6, atol=1e-6)
    assert_close(loss, 0.05 * ((x - z_q) ** 2).mean(), rtol=1e-6, atol=1e-8)
    assert 1.0 <= float(perplexity) <= 2 * 8


def test_straight_through_gradient_is_the_identity():
    vq = _vq().eval()
    x = torch.randn(5, vq.dim, dtype=torch.float32, requires_grad=True)
    z_q = vq(x)[0]
    g = torch.randn_like(z_q)
    (grad,) = torch.autograd.grad(z_q, x, g)
    assert torch.equal(grad, g)


def test_one_ema_step_matches_a_naive_update():
    vq = _vq(decay=0.9).train()
    gen = torch.Generator().manual_seed(2)
    vq(torch.randn(16, vq.dim, generator=gen))  # data-dependent init + first EMA step
    count, weight = vq.ema_count.clone(), vq.ema_weight.clone()
    x = torch.randn(16, vq.dim, generator=gen)
    with torch.no_grad():
        _, _, _, idx = vq.eval()(x)  # assignments under the pre-update codebook
    vq.train()(x)
    g, eps, M = 0.9, 1e-5, 8
    vecs = x.reshape(16, 2, 4, 3).permute(1, 0, 3, 2).reshape(2, 48, 4)
    assign = idx.permute(1, 0, 2).reshape(2, 48)
    for n in range(2):
        counts = torch.zeros(M)
        sums = torch.zeros(M, 4)
        for i in range(48):
            counts[assign[n, i]] += 1
            sums[assign[n, i]] += vecs[n, i]
        c = g * count[n] + (1 - g) * counts
        total = c.sum()
        c = (c + eps) / (total + M * eps) * total
        w = g * weight[n] + (1 - g) * sums
        assert_close(vq.ema_count[n], c, rtol=1e-5, atol=1e-6)
        assert_close(vq.ema_weight[n], w, rtol=1e-5, atol=1e-6)
        assert_close(vq.embedding[n], w / c[:, None], rtol=1e-5, atol=1e-6)
