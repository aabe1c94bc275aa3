"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range and resource-sized values listed in ``bad``)."""

import torch
from torch_geometric.data import Data

import symgfm
from paperkit.testing import BadInputs, Call, fresh
from symgfm import csbm_graph, prepare_graph

G = csbm_graph(24, 4, 3, 0.7, avg_degree=4, seed=0, train_per_class=4)
P = prepare_graph(G, G.train_mask)
N, F, C = 24, 4, 3
GEN = torch.Generator().manual_seed(0)
A = torch.randn(8, 3, generator=GEN)
B = torch.randn(8, 2, generator=GEN)
Z = torch.randn(N, 5, 2, generator=GEN)
X3, Y3 = torch.randn(N, F, 1, generator=GEN), torch.randn(N, C, 1, generator=GEN)
Y1 = torch.nn.functional.one_hot(G.y, C).float()
LP = symgfm.lp_split(G.y, G.train_mask, 0.4, torch.Generator().manual_seed(0))[0]


def _graph(**changes):
    g = G.clone()
    for k, v in changes.items():
        setattr(g, k, v)
    return g


BAD_GRAPHS = [
    _graph(x=G.x.long()),  # non-float features
    _graph(x=torch.full_like(G.x, float("nan"))),
    _graph(y=G.y - 1),  # labels not 0..C-1
    _graph(y=torch.zeros_like(G.y)),  # C < 2
    _graph(edge_index=G.edge_index + N),  # edges out of range
    _graph(y=G.y[:-1]),
    "not a graph",
]
# for the entry points that read data.train_mask: class 1 without train nodes
BAD_MASKED = [*BAD_GRAPHS, _graph(train_mask=G.train_mask & (G.y != 1))]
NO_MASK = Data(x=G.x, y=G.y, edge_index=G.edge_index)


SUITE = BadInputs(
    symgfm,
    [
        Call(
            symgfm.ridge_ls,
            A=A,
            B=B,
            lambdas=(1e-8, 1e-2),
            cv="loo",
            shapes={"A": "n p", "B": "n q"},
            bad={"lambdas": [(0.0,), (-1.0,), "1e-3", ()]},
        ),
        Call(
            symgfm.ridge_loo_errors,
            A=A,
            B=B,
            lambdas=[1e-4],
            shapes={"A": "n p", "B": "n q"},
            bad={"lambdas": [[0.0]]},
        ),
        Call(
            symgfm.least_squares_maps,
            x=G.x,
            y_onehot=Y1,
            edge_index=G.edge_index,
            train_mask=G.train_mask,
            ls_num_layers=1,
            shapes={"x": "N F", "y_onehot": "N C", "train_mask": "N", "edge_index": "2 E"},
            bad={
                "ls_num_layers": [-1, 9],
                "train_mask": [torch.zeros(N, dtype=torch.bool)],
                "edge_index": [G.edge_index + N],
            },
            accepts={"edge_index": {"empty"}},
        ),  # a graph without edges is a graph
        Call(
            symgfm.prepare_graph,
            data=fresh(G.clone),
            train_mask=G.train_mask,
            ls_num_layers=1,
            pca_dim=8,
            shapes={"train_mask": "24"},
            bad={
                "data": BAD_GRAPHS,
                "ls_num_layers": [-1, 9],
                "pca_dim": [0],
                "train_mask": [G.train_mask & (G.y != 2)],
            },
        ),
        Call(
            symgfm.MeanGNN,
            k_in=2,
            k_out=3,
            call={"z": Z, "edge_index": G.edge_index},
            shapes={"z": "N A 2", "edge_index": "2 E"},
            bad={"k_in": [0, 10**6], "k_out": [0]},
            accepts={"edge_index": {"empty"}},
        ),
        Call(
            symgfm.GATCore,
            k_in=2,
            k_out=3,
            call={"z": Z, "edge_index": G.edge_index},
            shapes={"z": "N A 2", "edge_index": "2 E"},
            bad={"k_in": [0, 10**6], "k_out": [0]},
            accepts={"edge_index": {"empty"}},
        ),
        Call(
            symgfm.TSLayer,
            k_in=1,
            k_out=4,
            ls_num_layers=1,
            core="mean",
            use_ls_maps=True,
            call={"x": X3, "y": Y3, "maps": P.conversions, "edge_index": P.edge_index},
            shapes={"x": "N F 1", "y": "N C 1", "edge_index": "2 E"},
            bad={
                "k_in": [0],
                "k_out": [10**6],
                "ls_num_layers": [9],
                "maps": [{}, {k: v for k, v in P.conversions.items() if k != "ls2y_1"}],
            },
            accepts={"edge_index": {"empty"}},
        ),
        Call(
            symgfm.TSGNN,
            hidden=4,
            num_layers=2,
            ls_num_layers=1,
            core="gat",
            use_ls_maps=True,
            call={"data": P, "y_input": P.y0},
            shapes={"y_input": "24 3"},
            bad={
                "hidden": [0, 10**5],
                "num_layers": [0, 17],
                "ls_num_layers": [-1],
                "data": [G, "x"],
                "y_input": [P.y0[:, :2]],
            },
        ),
        Call(
            symgfm.fit_foundation,
            model=fresh(lambda: symgfm.TSGNN(hidden=2)),
            graphs=[G],
            epochs=1,
            lr=0.01,
            lp_ratio=0.4,
            seed=0,
            ls_from="context",
            bad={
                "model": [torch.nn.Linear(2, 2)],
                "graphs": [[], [NO_MASK], [BAD_GRAPHS[0]], [BAD_MASKED[-1]]],
                "epochs": [0, 10**6],
                "lr": [0.0, 2.0],
                "lp_ratio": [0.0, 1.0, 0.01],
                "seed": [-1],
            },
        ),
        Call(
            symgfm.zero_shot_predict,
            model=symgfm.TSGNN(hidden=2),
            data=fresh(G.clone),
            bad={"model": [None], "data": [NO_MASK, *BAD_MASKED]},
        ),
        Call(
            symgfm.lp_split,
            y=G.y,
            train_mask=G.train_mask,
            lp_ratio=0.4,
            generator=torch.Generator().manual_seed(0),
            shapes={"y": "N", "train_mask": "N"},
            bad={"lp_ratio": [0.0, 1.0, 0.01], "generator": [3]},
        ),
        Call(
            symgfm.context_maps,
            data=P,
            lp_mask=LP,
            ls_from="all_train",
            shapes={"lp_mask": "24"},
            bad={"data": [G], "lp_mask": [torch.zeros(N, dtype=torch.bool), ~G.train_mask]},
        ),
        Call(
            symgfm.LinearGNN,
            hops=(0, 1),
            call={"data": fresh(G.clone)},
            method="fit_predict",
            bad={"hops": [(), (-1,), (9,), "01"], "data": BAD_MASKED},
        ),
        Call(
            symgfm.LabelPropagation,
            num_layers=3,
            alpha=0.9,
            call={"data": fresh(G.clone)},
            method="fit_predict",
            bad={"num_layers": [0], "alpha": [-0.1, 1.5], "data": [NO_MASK, *BAD_MASKED]},
        ),
        Call(
            symgfm.EndToEndMeanGNN,
            hidden=4,
            epochs=2,
            lr=0.01,
            seed=0,
            call={"data": fresh(G.clone)},
            method="fit_predict",
            bad={
                "hidden": [0, 10**5],
                "epochs": [0],
                "lr": [0.0],
                "seed": [-1],
                "data": BAD_MASKED,
            },
        ),
        Call(
            symgfm.csbm_graph,
            num_nodes=30,
            num_features=3,
            num_classes=2,
            homophily=0.5,
            avg_degree=4.0,
            signal=1.0,
            seed=0,
            train_per_class=3,
            bad={
                "num_nodes": [0, 10**8],
                "num_features": [0],
                "num_classes": [1, 16],
                "homophily": [-0.1, 1.1],
                "avg_degree": [1.0],
                "signal": [-1.0],
                "seed": [-1],
                "train_per_class": [0, 16],
            },
        ),
        Call(symgfm.csbm_pool, num_graphs=1, seed=0, bad={"num_graphs": [0, 10**4], "seed": [-1]}),
    ],
    exempt={
        "tabular_knn_graph": "a loader of bundled scikit-learn data (importing sklearn.neighbors "
        "takes seconds); its argument checks are tested in test_data.py",
        "karate_graph": "a loader of PyG's KarateClub; its argument check is in test_data.py",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
