import math

import torch
from torch_geometric.data import Data

import graphtop
from paperkit.testing import BadInputs, Call, fresh


class Graph(Data):
    """A PyG graph the suite does not take for a tensor (it tests ``type(v).__module__`` for
    ``"torch"``, which ``torch_geometric`` matches, and ``Data`` has ``detach``)."""


HIDDEN = 8
DATA = Graph(**graphtop.make_csbm(60, 3, 8, 4.0, 0.5, 1.5, seed=0).to_dict())
TRAIN, TEST = graphtop.few_shot_split(DATA.y, shots=2, num_test=10, seed=0)
gen = torch.Generator().manual_seed(0)


def encoder():
    torch.manual_seed(0)
    return graphtop.GCNEncoder(8, HIDDEN, HIDDEN)


def with_nan(t):
    t = t.clone()
    t.reshape(-1)[0] = math.nan
    return t


def graph(**fields):
    return Graph(**{"x": DATA.x, "edge_index": DATA.edge_index, "y": DATA.y, **fields})


# Graphs every entry point refuses (naming `data`): NaN features, an edge_index that is not
# (2, E) integer ids below N, not a graph at all.
BAD_GRAPHS = [
    graph(x=with_nan(DATA.x)),
    graph(x=DATA.x[:0]),
    graph(edge_index=DATA.edge_index.float()),
    graph(edge_index=DATA.edge_index[:1]),
    graph(edge_index=torch.cat([DATA.edge_index, torch.tensor([[0], [60]])], 1)),
    graph(edge_index=DATA.edge_index - 1),
    "graph",
]
# ... and, where an encoder reads the graph, features of another dtype or width.
ENCODER_GRAPHS = [graph(x=DATA.x.double()), graph(x=DATA.x[:, :4])]
# ... and, to train, labels that are not integers below num_classes.
LABEL_GRAPHS = [graph(y=DATA.y.float()), graph(y=DATA.y + 5)]
FIT = {"data": DATA, "train_nodes": TRAIN, "epochs": 1, "lr": 0.01, "batch_size": 50, "seed": 0}
FIT_BAD = {
    "data": BAD_GRAPHS + ENCODER_GRAPHS + LABEL_GRAPHS,
    "train_nodes": [torch.tensor([60])],
    "epochs": [0],
    "lr": [0.0],
    "batch_size": [0],
    "seed": [-1],
}
MODEL = {"num_classes": 3, "hidden": HIDDEN, "num_hops": 2}
MODEL_BAD = {"encoder": ["encoder"], "num_classes": [1], "hidden": [0, 16], "num_hops": [0]}
GRAPHTOP = {"lambda_ent": 2.0, "lambda_sparse": 10.0, "target_density": 0.5, "t": 0.2}
GRAPHTOP_BAD = {
    **MODEL_BAD,
    "lambda_ent": [-1.0],
    "lambda_sparse": [-1.0],
    "target_density": [1.5],
    "t": [0.0],
}


def fitted(model):
    model.fit(DATA, TRAIN, epochs=1)


def baseline(cls, **extra):
    bad = {**MODEL_BAD, **FIT_BAD, **{k: [0] for k in extra}}
    return Call(
        cls, encoder=fresh(encoder), **MODEL, **extra, call=dict(FIT), method="fit", bad=bad
    )


def graphtop_call(method, call, bad, prepare=fitted):
    return Call(
        graphtop.GraphTOP,
        name=f"GraphTOP.{method}",
        encoder=fresh(encoder),
        **MODEL,
        **GRAPHTOP,
        call=call,
        method=method,
        prepare=prepare,
        bad={**GRAPHTOP_BAD, **bad},
    )


def pretrain(encoder, data, **kw):
    """``method`` is a keyword of Call itself, so it is fixed here; the refusal of an unknown
    method is tested in test_pretrain.py."""
    return graphtop.pretrain(encoder, data, "link_pred", **kw)


SUBGRAPH = Graph(**graphtop.build_target_subgraphs(DATA, [0])[0].to_dict())

SUITE = BadInputs(
    graphtop,
    [
        baseline(graphtop.LinearProbe),
        baseline(graphtop.GPF),
        baseline(graphtop.GPFPlus, num_basis=2),
        baseline(graphtop.EdgePromptLite),
        baseline(graphtop.FineTune),
        graphtop_call("fit", dict(FIT), FIT_BAD, prepare=None),
        graphtop_call(
            "predict_proba",
            {"data": DATA, "nodes": TEST, "mode": "sample", "n_samples": 1},
            {"data": BAD_GRAPHS + ENCODER_GRAPHS, "nodes": [torch.tensor([60])], "n_samples": [0]},
        ),
        graphtop_call(
            "rewiring_stats",
            {"data": DATA, "nodes": TEST, "mode": "threshold"},
            {"data": BAD_GRAPHS, "nodes": [torch.tensor([60])]},
        ),
        graphtop_call(
            "rewired_subgraph",
            {"data": DATA, "node": 0, "mode": "threshold"},
            {"data": BAD_GRAPHS, "node": [-1, 60]},
        ),
        Call(
            graphtop.GCNEncoder,
            in_dim=5,
            hidden=4,
            out_dim=3,
            num_layers=2,
            call={
                "x": torch.randn(6, 5, generator=gen),
                "edge_index": torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]]),
                "edge_weight": torch.rand(4, generator=gen),
            },
            shapes={"x": "N 5", "edge_index": "2 E", "edge_weight": "E"},
            bad={
                "in_dim": [0],
                "hidden": [0],
                "out_dim": [0],
                "num_layers": [0],
                "edge_index": [torch.tensor([[0], [6]])],
                "edge_weight": [-torch.ones(4)],
            },
        ),
        Call(
            graphtop.TopologyPrompt,
            hidden=8,
            temperature=0.2,
            call={
                "h_target": torch.randn(5, 8, generator=gen),
                "h_cand": torch.randn(5, 8, generator=gen),
            },
            shapes={"h_target": "M 8", "h_cand": "M 8"},
            bad={"hidden": [0], "temperature": [0.0]},
        ),
        Call(
            graphtop.relax_edges,
            p=torch.rand(6, generator=gen),
            tau=0.5,
            generator=None,
            bad={"p": [torch.tensor([0.5, 1.5])], "tau": [0.0], "generator": [3]},
            accepts={"p": {"empty", "rank"}},  # element-wise: any shape, empty gives empty
        ),
        Call(
            graphtop.entropy_loss,
            p=torch.rand(6, generator=gen),
            eps=1e-10,
            bad={"p": [torch.tensor([-0.5])], "eps": [-1.0]},
            accepts={"p": {"empty", "rank"}},  # a mean over any shape; empty gives 0
        ),
        Call(
            graphtop.sparsity_loss,
            p=torch.rand(5, generator=gen),
            index=torch.tensor([0, 0, 1, 2, 2]),
            target_density=0.5,
            num_subgraphs=3,
            shapes={"p": "M", "index": "M"},
            bad={
                "p": [torch.tensor([0.5, 2.0, 0.1, 0.1, 0.1])],
                "target_density": [1.5],
                "num_subgraphs": [0, 2],
            },
        ),
        Call(
            graphtop.tau_schedule,
            epoch=1,
            epochs=10,
            start=0.97,
            end=0.03,
            bad={"epoch": [0, 11], "epochs": [0], "start": [-0.1], "end": [0.0]},
        ),
        Call(
            graphtop.build_target_subgraphs,
            data=DATA,
            nodes=TEST,
            num_hops=2,
            bad={"data": BAD_GRAPHS, "nodes": [torch.tensor([60])], "num_hops": [0]},
        ),
        Call(
            graphtop.num_candidates,
            subgraph=SUBGRAPH,
            bad={"subgraph": ["subgraph", DATA]},
        ),
        Call(
            graphtop.make_csbm,
            n=60,
            num_classes=3,
            feat_dim=8,
            avg_degree=4.0,
            homophily=0.5,
            mu_sep=1.5,
            seed=0,
            bad={
                "n": [2, 10**12],
                "num_classes": [1],
                "feat_dim": [2, 10**12],
                "avg_degree": [0.0, 60.0],
                "homophily": [1.5],
                "mu_sep": [-1.0],
                "seed": [-1],
            },
        ),
        Call(
            graphtop.few_shot_split,
            y=DATA.y,
            shots=2,
            num_test=10,
            seed=0,
            bad={"y": [torch.tensor([0, 10**12])], "shots": [0, 100], "num_test": [0, 1000]},
        ),
        Call(
            pretrain,
            encoder=fresh(encoder),
            data=DATA,
            epochs=1,
            seed=0,
            lr=1e-3,
            batch_size=8,
            temperature=0.5,
            drop=0.2,
            num_hops=2,
            eta=1.0,
            bad={
                "encoder": ["encoder"],
                "data": BAD_GRAPHS + ENCODER_GRAPHS,
                "epochs": [0],
                "lr": [0.0],
                "batch_size": [1],
                "temperature": [0.0],
                "drop": [1.0],
                "eta": [-1.0],
            },
        ),
        Call(
            graphtop.info_nce,
            a=torch.randn(4, 3, generator=gen),
            b=torch.randn(4, 3, generator=gen),
            temperature=0.5,
            shapes={"a": "B d", "b": "B d"},
            bad={"temperature": [0.0]},
        ),
    ],
    exempt={
        "load_planetoid": "reads a Planetoid folder the tests cannot assume; its refusals of a "
        "bad root and name are tested in test_data.py",
    },
)
test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
