import os
from pathlib import Path

import pytest
import torch
from torch_geometric.utils import homophily, is_undirected

from graphtop import few_shot_split, load_karate_club, load_planetoid, make_csbm
from paperkit.testing import assert_param_error

# A folder holding Cora/raw (PyG's Planetoid layout), when the machine has one.
PLANETOID = os.environ.get("GRAPHTOP_PLANETOID_ROOT")
HAS_CORA = PLANETOID is not None and (Path(PLANETOID) / "Cora" / "raw").is_dir()


@pytest.mark.parametrize("h", [0.8, 0.2])
def test_csbm_homophily_degree_and_balance(h):
    data = make_csbm(1200, 4, 16, 8.0, h, 1.0, seed=0)
    assert data.x.shape == (1200, 16) and is_undirected(data.edge_index)
    assert not (data.edge_index[0] == data.edge_index[1]).any()
    assert abs(homophily(data.edge_index, data.y) - h) < 0.03
    assert 7.5 < data.edge_index.shape[1] / 1200 <= 8.0  # duplicates and loops dropped
    assert torch.bincount(data.y).tolist() == [300] * 4


def test_csbm_class_means_are_mu_sep_apart():
    data = make_csbm(8000, 3, 12, 2.0, 0.5, 4.0, seed=1)
    means = torch.stack([data.x[data.y == c].mean(0) for c in range(3)])
    dist = torch.cdist(means, means)[torch.triu_indices(3, 3, 1).unbind()]
    assert torch.allclose(dist, torch.full((3,), 4.0), atol=0.15)


def test_csbm_is_seeded():
    a, b = make_csbm(100, 2, 4, 3.0, 0.5, 1.0, seed=4), make_csbm(100, 2, 4, 3.0, 0.5, 1.0, seed=4)
    assert torch.equal(a.x, b.x) and torch.equal(a.edge_index, b.edge_index)
    c = make_csbm(100, 2, 4, 3.0, 0.5, 1.0, seed=5)
    assert not torch.equal(a.edge_index, c.edge_index)


def test_few_shot_split():
    y = torch.arange(60) % 3
    train, test = few_shot_split(y, shots=4, num_test=30, seed=0)
    assert torch.bincount(y[train]).tolist() == [4, 4, 4]
    assert len(test) == 30 and not set(train.tolist()) & set(test.tolist())
    again, _ = few_shot_split(y, shots=4, num_test=30, seed=0)
    other, _ = few_shot_split(y, shots=4, num_test=30, seed=1)
    assert torch.equal(train, again) and not torch.equal(train, other)


def test_few_shot_split_errors():
    y = torch.tensor([0, 0, 0, 1, 1])
    assert_param_error(few_shot_split, y, shots=3, num_test=1, param="shots")
    assert_param_error(few_shot_split, y, shots=2, num_test=2, param="num_test")
    assert_param_error(few_shot_split, y.float(), shots=1, num_test=1, param="y", exc=TypeError)


def test_karate_club_ships_with_pyg():
    data = load_karate_club()
    assert data.num_nodes == 34 and int(data.y.max()) == 3


@pytest.mark.skipif(not HAS_CORA, reason="GRAPHTOP_PLANETOID_ROOT holds no Cora/raw")
def test_cora_from_a_read_only_root():
    data = load_planetoid(PLANETOID, "Cora")
    assert data.num_nodes == 2708 and data.x.shape[1] == 1433 and int(data.y.max()) == 6
    assert not (Path(PLANETOID) / "Cora" / "processed").exists()


def test_planetoid_arguments(tmp_path):
    assert_param_error(load_planetoid, tmp_path, "Cora", param="root")
    assert_param_error(load_planetoid, 3, "Cora", param="root", exc=TypeError)
    assert_param_error(load_planetoid, tmp_path, "Citeseer", param="name")
    assert_param_error(load_planetoid, tmp_path, None, param="name", exc=TypeError)
