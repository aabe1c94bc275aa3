"""Baselines: exact forecasts of the naive ones, shapes and structure of the learned ones."""

import numpy as np
import torch

from factost import (
    HistoricalAverage,
    JointSTTransformer,
    SeasonalNaive,
    STExpert,
    make_st_domain,
    pretrain_joint,
)
from factost.data import STDomain
from factost.graph import knn_graph


def _periodic_domain():
    t = np.arange(24 * 14)
    values = np.stack([np.sin(2 * np.pi * t / 24) + n for n in range(5)], 1).astype(np.float32)
    coords = np.random.default_rng(0).random((5, 2)).astype(np.float32)
    tf = np.stack([(t % 24) / 24, (t // 24) % 7], 1).astype(np.float32)
    return STDomain("periodic", values, coords, knn_graph(torch.from_numpy(coords), 2), tf)


def test_naive_baselines_are_exact_on_a_periodic_signal():
    d = _periodic_domain()
    x, y, tf = d.windows(24, 12, "test")
    assert torch.allclose(SeasonalNaive(12)(x), y, atol=1e-5)
    ha = HistoricalAverage(24, 12).fit(d, shots=0.5)
    assert torch.allclose(ha(x, None, tf), y, atol=1e-4)


def test_joint_transformer_shapes_and_node_equivariance():
    torch.manual_seed(0)
    m = JointSTTransformer(12, 6, 2, d_model=16, layers=1, heads=2, dropout=0.0).eval()
    x, coords = torch.randn(2, 7, 12), torch.rand(7, 2)
    out = m(x, coords)
    perm = torch.randperm(7)
    assert out.shape == (2, 7, 6)
    assert torch.allclose(m(x[:, perm], coords[perm]), out[:, perm], atol=1e-5)


def test_st_expert_uses_the_graph():
    torch.manual_seed(0)
    m = STExpert(6, 12, 4, channels=8, layers=2)
    x = torch.randn(3, 6, 12)
    edges = knn_graph(torch.rand(6, 2), 2)
    out = m(x, None, None, edges)
    assert out.shape == (3, 6, 4)
    x2 = x.clone()
    x2[:, 0] += torch.randn(12)  # node 0 changes: its graph neighbours' forecasts change too
    out2 = m(x2, None, None, edges)
    nbrs = edges[1][edges[0] == 0]
    assert (out2[:, nbrs] - out[:, nbrs]).abs().max() > 1e-6


def test_pretrain_joint_respects_its_time_limit():
    d = make_st_domain("air", 6, 24 * 10, seed=0)
    m = JointSTTransformer(12, 6, 2, d_model=8, layers=1, heads=2)
    spent = pretrain_joint(m, [d], epochs=1000, time_limit=0.3)
    assert 0.3 <= spent < 3.0
