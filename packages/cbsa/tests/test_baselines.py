"""MSSA, TSSA and softmax attention against their formulas, and MSSA as CBSA's special case."""

import torch
import torch.nn.functional as F
from einops import rearrange

from cbsa import MSSA, TSSA, SoftmaxAttention
from cbsa.functional import contract_broadcast
from conftest import rand
from paperkit.testing import assert_close

D, H, P, N = 12, 3, 4, 9


def make(cls):
    torch.manual_seed(0)
    return cls(D, H, P).double()


def test_mssa_is_cbsa_with_every_token_its_own_representative():
    mssa = make(MSSA)
    x = rand(2, N, D, seed=1)
    w = rearrange(mssa.proj(x), "b n (h p) -> b h n p", h=H)
    eye = torch.eye(N, dtype=x.dtype).expand(2, H, N, N)
    out, _ = contract_broadcast(
        w, w, torch.zeros(H, dtype=x.dtype), torch.ones(H, dtype=x.dtype), assignment=eye
    )
    assert_close(
        mssa(x), mssa.to_out(rearrange(out, "b h n p -> b n (h p)")), rtol=1e-12, atol=1e-13
    )


def test_softmax_attention_matches_sdpa():
    layer = make(SoftmaxAttention)
    x = rand(2, N, D, seed=2)
    q, k, v = rearrange(layer.qkv(x), "b n (t h p) -> t b h n p", t=3, h=H)
    ref = F.scaled_dot_product_attention(q, k, v)
    assert_close(
        layer(x), layer.to_out(rearrange(ref, "b h n p -> b n (h p)")), rtol=1e-12, atol=1e-13
    )


def test_tssa_matches_its_per_token_formula():
    layer = make(TSSA)
    x = rand(1, N, D, seed=3)
    w = rearrange(layer.proj(x), "b n (h p) -> b h n p", h=H)[0]  # (H, N, P)
    out = torch.empty_like(w)
    energy = torch.stack([(w[k] / w[k].norm(dim=0)).pow(2).sum(1) for k in range(H)])  # (H, N)
    pi = torch.softmax(energy * layer.temp, dim=0)  # over heads
    for k in range(H):
        sigma = sum(pi[k, i] * w[k, i] ** 2 for i in range(N)) / (pi[k].sum() + 1e-8)
        for i in range(N):
            out[k, i] = -pi[k, i] * w[k, i] / (1 + sigma)
    expected = layer.to_out(rearrange(out, "h n p -> n (h p)"))[None]
    assert_close(layer(x), expected, rtol=1e-12, atol=1e-13)


def test_attention_maps_are_row_stochastic():
    x = rand(1, N, D, seed=4)
    for layer in (make(MSSA), make(SoftmaxAttention)):
        attn = layer(x, return_attn=True)
        assert attn.shape == (1, H, N, N)
        assert_close(attn.sum(-1), torch.ones(1, H, N, dtype=x.dtype), rtol=0, atol=1e-13)
