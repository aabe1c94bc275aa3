"""Stage 2: top-k pruning, frozen mode, gradcheck of the adapter, the FactoST forward."""

import math

import torch

from factost import FactoST, STAdapter, TemporalBackbone, count_trainable, sparse_attention
from factost.graph import knn_graph, prior_mask


def _dense_reference(q, k, v):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return torch.softmax(scores, -1) @ v


def test_topk_rows_have_at_most_k_plus_prior_nonzeros():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(3, 20, 8, generator=g) for _ in range(3))
    _, attn = sparse_attention(q, k, v, topk=4)
    assert ((attn > 0).sum(-1) <= 4).all() and ((attn > 0).sum(-1) == 4).all()
    coords = torch.rand(20, 2, generator=g)
    prior = prior_mask(knn_graph(coords, 3), 20)
    _, attn = sparse_attention(q, k, v, topk=4, prior=prior)
    assert ((attn > 0).sum(-1) <= 4 + prior.sum(-1)).all()
    assert (attn[:, prior] > 0).all()  # every prior edge is kept


def test_topk_at_least_n_is_dense_attention():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 5, 7, 8, generator=g, dtype=torch.float64) for _ in range(3))
    ref = _dense_reference(q, k, v)
    for topk in (7, 50, None):
        out, _ = sparse_attention(q, k, v, topk=topk)
        assert torch.allclose(out, ref, atol=1e-12)


def test_frozen_mode_trains_only_the_adapter():
    f = TemporalBackbone(12, 6, 2, d_model=16, layers=2, heads=2, n_domains=3)
    adapter = STAdapter(16, n_nodes=6, topk=3)
    model = FactoST(f, adapter, "frozen")
    assert count_trainable(model) == sum(p.numel() for p in adapter.parameters())
    assert count_trainable(model) == count_trainable(adapter)
    x = torch.randn(2, 6, 12)
    model(x, torch.rand(6, 2), torch.tensor([[0.25, 1.0], [0.5, 6.0]])).sum().backward()
    assert all(p.grad is None for p in f.parameters())
    assert all(p.grad is not None for p in adapter.parameters() if p.requires_grad)
    model.set_finetune("last_layer")
    last = sum(p.numel() for p in [*f.encoder.layers[-1].parameters(), *f.norm.parameters()])
    assert count_trainable(model) == count_trainable(adapter) + last


def test_adapter_gradcheck_float64():
    torch.manual_seed(0)
    adapter = STAdapter(8, n_nodes=5, topk=3, layers=2, n_tokens=2, horizon=3).double()
    for p in adapter.parameters():  # the zero-initialised FiLM and head: make them non-trivial
        torch.nn.init.normal_(p, std=0.3)
    coords = torch.rand(5, 2, dtype=torch.float64)
    tf = torch.tensor([[0.5, 2.0]], dtype=torch.float64)
    edges = knn_graph(coords, 1)
    z = torch.randn(1, 5, 2, 8, dtype=torch.float64, requires_grad=True)

    def fn(z):
        return adapter.residual(adapter(z, coords, tf, edges))

    assert torch.autograd.gradcheck(fn, (z,), eps=1e-6, atol=1e-5)


def test_zero_initialised_parts_start_as_identity_film_and_no_residual():
    adapter = STAdapter(8, n_nodes=4, topk=2, n_tokens=3, horizon=5)
    z = torch.randn(2, 4, 3, 8)
    assert torch.equal(adapter.film(z, torch.rand(4, 2), torch.tensor([[0.1, 1.0], [0.9, 3.0]])), z)
    assert torch.equal(adapter.residual(z), torch.zeros(2, 4, 5))


def test_factost_is_deterministic_and_node_permutation_equivariant_without_meta():
    torch.manual_seed(0)
    f = TemporalBackbone(12, 4, 2, d_model=8, layers=1, heads=2, dropout=0.0)
    model = FactoST(f, STAdapter(8, topk=3, use_meta=False)).eval()
    x = torch.randn(2, 6, 12)
    perm = torch.randperm(6)
    out = model(x)
    assert torch.equal(out, model(x))
    assert torch.allclose(model(x[:, perm]), out[:, perm], atol=1e-5)
