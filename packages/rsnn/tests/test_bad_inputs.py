"""Every public entry point of rsnn with one valid call; the shared suite derives the bad ones."""

import networkx as nx
import numpy as np
import torch
from torch_geometric.data import Batch, Data

import rsnn
from paperkit.testing import BadInputs, Call, fresh
from rsnn.data import graph_data

SQUARE = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]])
HUGE = 10**13  # sizes memory far beyond any machine: refused by check_memory
GRAPH = graph_data(nx.cycle_graph(5))
FEATURED = Data(x=torch.ones(4, 2), edge_index=SQUARE, edge_attr=torch.ones(8, 1), num_nodes=4)
BATCH = Batch.from_data_list([graph_data(nx.cycle_graph(4)), graph_data(nx.path_graph(3))])
SEARCHES = rsnn.random_dfs(SQUARE, 4, 2, generator=torch.Generator().manual_seed(0))
WALKS = torch.tensor([[0, 1, 2, 3], [2, 3, 0, -1]])

# graphs the suite cannot derive (they are not tensors): wrong content inside a valid container
DIRECTED = Data(x=torch.ones(4, 1), edge_index=SQUARE[:, ::2], num_nodes=4)
NAN_X = Data(x=torch.tensor([[1.0], [float("nan")], [1.0], [1.0]]), edge_index=SQUARE, num_nodes=4)
WIDE_X = Data(x=torch.ones(4, 3), edge_index=SQUARE, num_nodes=4)
BIG = graph_data(nx.cycle_graph(40))  # more nodes than a max_anon of 16
SEARCH_OF_5 = rsnn.random_dfs(GRAPH.edge_index, 5, 1)

SUITE = BadInputs(
    rsnn,
    [
        Call(
            rsnn.random_dfs,
            edge_index=SQUARE,
            num_nodes=4,
            num_searches=2,
            shapes={"edge_index": "2 E"},
            bad={"num_nodes": [0, HUGE], "num_searches": [0, HUGE], "generator": [0]},
            generator=fresh(lambda: torch.Generator().manual_seed(0)),
        ),
        Call(
            rsnn.random_walks,
            edge_index=SQUARE,
            num_nodes=4,
            num_walks=3,
            length=5,
            non_backtracking=False,
            shapes={"edge_index": "2 E"},
            bad={"num_walks": [0, HUGE], "length": [-1, HUGE], "num_nodes": [0]},
        ),
        Call(
            rsnn.coverage,
            edge_index=SQUARE,
            num_nodes=4,
            seqs=WALKS,
            shapes={"edge_index": "2 E"},
            bad={"seqs": [SEARCH_OF_5, torch.tensor([[0, 9]]), torch.tensor([[0, -2]])]},
            accepts={"seqs": ["negative"]},  # -1 marks padding, by design
        ),
        Call(
            rsnn.coverage,
            name="coverage_of_searches",
            edge_index=SQUARE,
            num_nodes=4,
            seqs=SEARCHES,
            bad={"seqs": [[[0, 1]]]},
        ),
        Call(
            rsnn.samples_to_cover,
            edge_index=SQUARE,
            num_nodes=4,
            kind="walk",
            walk_length=4,
            max_samples=50,
            shapes={"edge_index": "2 E"},
            bad={"walk_length": [0, HUGE], "max_samples": [0]},
        ),
        Call(
            rsnn.serialize,
            data=FEATURED,
            batch=SEARCHES,
            mode="euler",
            bad={"data": [DIRECTED, NAN_X, "graph"], "batch": [SEARCH_OF_5, WALKS]},
        ),
        Call(
            rsnn.serialize,
            name="serialize_walks",
            data=FEATURED,
            batch=WALKS,
            mode="walk",
            bad={"batch": [torch.tensor([[0, 7]]), SEARCHES]},
            accepts={"batch": ["negative"]},  # -1 marks padding, by design
        ),
        Call(
            rsnn.anonymize,
            nodes=WALKS,
            bad={"nodes": [torch.tensor([[0, -2]])]},
            accepts={"nodes": ["negative"]},  # -1 marks padding, by design
        ),
        Call(
            rsnn.pool_nodes,
            h=torch.randn(2, 4, 3),
            node_ids=WALKS,
            num_nodes=4,
            shapes={"h": "S L D", "node_ids": "S L"},
            bad={"num_nodes": [0, HUGE]},
            accepts={"node_ids": ["negative"]},  # -1 marks padding, by design
        ),
        Call(
            rsnn.SequenceEncoder,
            kind="gru",
            hidden=8,
            call={"z": torch.randn(2, 5, 8), "pad_mask": torch.zeros(2, 5, dtype=torch.bool)},
            shapes={"z": "S L 8", "pad_mask": "S L"},
            bad={"hidden": [0, 7, HUGE], "pad_mask": [torch.ones(2, 5, dtype=torch.bool)]},
        ),
        Call(
            rsnn.RSNN,
            in_dim=1,
            hidden=8,
            out_dim=2,
            seq_model="cnn",
            num_searches=2,
            serialization="euler",
            level="graph",
            max_anon=16,
            window=2,
            call={"batch": BATCH, "num_searches": 2},
            bad={
                "window": [-1, HUGE],
                "in_dim": [-1, HUGE],
                "hidden": [0, HUGE],
                "out_dim": [0],
                "num_searches": [0, HUGE],
                "max_anon": [0, HUGE],
                "batch": ["graph", DIRECTED, NAN_X, WIDE_X, BIG],
            },
        ),
        Call(
            rsnn.RWNN,
            in_dim=1,
            hidden=8,
            out_dim=2,
            seq_model="gru",
            num_walks=2,
            walk_length=6,
            non_backtracking=True,
            call={"batch": BATCH, "num_walks": 3},
            bad={
                "walk_length": [0, HUGE],
                "num_walks": [0, HUGE],
                "hidden": [7],
                "batch": ["graph", DIRECTED, NAN_X, WIDE_X],
            },
        ),
        Call(
            rsnn.GIN,
            in_dim=1,
            hidden=8,
            out_dim=2,
            num_layers=2,
            call={"batch": BATCH},
            bad={
                "in_dim": [0],
                "num_layers": [0, HUGE],
                "hidden": [HUGE],
                "batch": [WIDE_X, NAN_X],
            },
        ),
        Call(
            rsnn.make_csl,
            num_per_class=1,
            n=11,
            skips=(2, 3),
            seed=0,
            bad={"num_per_class": [0, HUGE], "n": [4, HUGE], "skips": [(1,), (2, 2), (10,), "23"]},
        ),
        Call(
            rsnn.make_cycle_count_dataset,
            num_graphs=2,
            n_range=(10, 12),
            seed=0,
            bad={"num_graphs": [0, HUGE], "n_range": [(5, 3), (1, 4), (3,), (2, HUGE)]},
        ),
        Call(
            rsnn.molecule_like,
            n=12,
            num_rings=1,
            rng=fresh(lambda: np.random.default_rng(0)),
            bad={"n": [0, HUGE], "num_rings": [-1], "rng": [0]},
        ),
        Call(
            rsnn.sparse_graph,
            family="regular3",
            n=10,
            seed=0,
            bad={"n": [0, 9, HUGE], "seed": [-1]},
        ),
    ],
    exempt={
        "SearchBatch": "a record of random_dfs's output; serialize and coverage validate the "
        "one they receive (the coverage_of_searches and serialize cases pass bad ones)",
        "SeqBatch": "a record of serialize's output; no function takes one as input",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
