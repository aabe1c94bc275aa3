import pytest
import torch
from torch_geometric.data import Data

from paperkit.testing import assert_param_error
from rsnn import (
    RSNN,
    RWNN,
    coverage,
    make_csl,
    make_cycle_count_dataset,
    random_dfs,
    random_walks,
    samples_to_cover,
    serialize,
    sparse_graph,
)

SQUARE = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]])


@pytest.mark.parametrize("fn", [random_dfs, lambda ei, n, m: random_walks(ei, n, m, 3)])
def test_sampler_inputs(fn):
    assert_param_error(fn, SQUARE, 4, 0, param="num_searches" if fn is random_dfs else "num_walks")
    assert_param_error(fn, SQUARE.float(), 4, 1, param="edge_index", exc=TypeError)
    assert_param_error(fn, SQUARE, 3, 1, param="edge_index")  # id 3 out of range
    assert_param_error(fn, SQUARE, 0, 1, param="num_nodes")  # the empty graph
    assert_param_error(fn, SQUARE[:, ::2], 4, 1, param="edge_index")  # directed
    loops = torch.cat([SQUARE, torch.tensor([[2], [2]])], 1)
    err = assert_param_error(fn, loops, 4, 1, param="edge_index")
    assert "self-loop" in str(err)
    assert_param_error(fn, SQUARE[0], 4, 1, param="edge_index")  # shape


def test_directed_message_names_the_fix():
    with pytest.raises(ValueError, match="use to_undirected"):
        random_dfs(SQUARE[:, ::2], 4, 1)


def test_walk_length_and_coverage_inputs():
    assert_param_error(random_walks, SQUARE, 4, 1, -1, param="length")
    assert_param_error(coverage, SQUARE, 4, [[0, 1]], param="seqs", exc=TypeError)
    s = random_dfs(SQUARE, 4, 1)
    assert_param_error(coverage, SQUARE, 5, s, param="seqs")  # a search of another graph
    assert_param_error(coverage, SQUARE, 4, torch.tensor([[0, 9]]), param="seqs")
    assert_param_error(samples_to_cover, SQUARE, 4, "bfs", param="kind")


def test_serialize_inputs():
    d = Data(x=torch.ones(4, 1), edge_index=SQUARE, num_nodes=4)
    s = random_dfs(SQUARE, 4, 1)
    assert_param_error(serialize, d, s, "bfs", param="mode")
    assert_param_error(serialize, d, s, "walk", param="batch", exc=TypeError)
    assert_param_error(
        serialize, d, torch.zeros(1, 3).long(), "euler", param="batch", exc=TypeError
    )
    d5 = Data(x=torch.ones(5, 1), edge_index=SQUARE, num_nodes=5)
    assert_param_error(serialize, d5, s, "euler", param="batch")


def test_model_inputs():
    assert_param_error(RSNN, 1, num_searches=0, param="num_searches")
    assert_param_error(RSNN, 1, seq_model="lstm", param="seq_model")
    assert_param_error(RSNN, 1, serialization="bfs", param="serialization")
    assert_param_error(RSNN, 1, level="edge", param="level")
    assert_param_error(RWNN, 1, walk_length=0, param="walk_length")
    model = RSNN(2, hidden=8)
    d = Data(x=torch.ones(4, 1), edge_index=SQUARE, num_nodes=4)
    err = assert_param_error(model, d, param="batch")  # x has 1 feature, the model wants 2
    assert "x is of shape (4, 2)" in str(err)
    assert_param_error(model, "graph", param="batch", exc=TypeError)
    assert_param_error(RSNN(1, edge_dim=3, hidden=8), d, param="batch")  # no edge_attr
    err = assert_param_error(RSNN(1, hidden=8, max_anon=3), d, param="batch")
    assert "max_anon = 3" in str(err)  # 4 nodes, refused before any search is drawn
    assert_param_error(RSNN(1, hidden=8), d, 0, param="num_searches")  # the name forward takes
    assert_param_error(RWNN(1, hidden=8), d, num_walks=0, param="num_walks")
    bad = Data(x=torch.ones(4, 1), edge_index=SQUARE[:, ::2], num_nodes=4)
    err = assert_param_error(RSNN(1, hidden=8), bad, param="batch")
    assert "edge_index is symmetric" in str(err)


def test_memory_sized_arguments_say_what_they_need():
    err = assert_param_error(random_dfs, SQUARE, 4, 10**13, param="num_searches")
    assert "fit in memory" in str(err) and "GiB" in str(err)
    assert_param_error(random_walks, SQUARE, 4, 2, 10**13, param="length")
    assert_param_error(random_dfs, SQUARE, 10**13, 1, param="num_nodes")


def test_generator_inputs():
    assert_param_error(make_csl, 0, param="num_per_class")
    assert_param_error(make_csl, skips=(1,), param="skips")
    assert_param_error(make_cycle_count_dataset, 3, (10, 5), param="n_range")
    assert_param_error(sparse_graph, "tree", 10, param="family")
