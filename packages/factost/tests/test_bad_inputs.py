"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range and resource-sized values listed in ``bad``)."""

import numpy as np
import torch

import factost
from factost import (
    BackboneFinetune,
    BackboneOnly,
    FactoST,
    HistoricalAverage,
    JointSTTransformer,
    PromptPool,
    ReplayBuffer,
    RevIN,
    SeasonalNaive,
    STAdapter,
    STExpert,
    TemporalBackbone,
    make_st_domain,
)
from paperkit.testing import BadInputs, Call, fresh

torch.manual_seed(0)
N, L, H, D = 5, 12, 4, 8
HUGE = 10**12
DOMAIN = make_st_domain("air", N, 24 * 8, seed=0)
COORDS = torch.from_numpy(DOMAIN.coords)
EDGES = DOMAIN.edge_index
X = torch.randn(2, N, L)
TIME = torch.tensor([[0.25, 1.0], [0.5, 6.0]])
SERIES = [
    (np.sin(np.arange(60, dtype=np.float32) / 3), 0),
    (np.cos(np.arange(50, dtype=np.float32)), 1),
]


def _backbone():
    return TemporalBackbone(L, H, 2, d_model=D, layers=1, heads=2, n_domains=2)


def _model():
    return FactoST(_backbone(), STAdapter(D, n_nodes=N, topk=2))


def _fitted_ha(model):
    model.fit(DOMAIN, 0.5)


BACKBONE = _backbone()
INT_SERIES = [(np.arange(40), 0)]
NAN_SERIES = [(np.full(40, np.nan, dtype=np.float32), 0)]

SUITE = BadInputs(
    factost,
    [
        Call(
            factost.band_split,
            x=torch.randn(2, 16),
            edges=(0.125, 0.25),
            accepts={"x": {"rank"}},
            bad={"edges": [(0.3, 0.2), (0.0,), (0.6,)]},
        ),
        Call(
            RevIN,
            eps=1e-5,
            method="norm",
            call={"x": torch.randn(3, 12)},
            accepts={"x": {"rank"}},
            bad={"eps": [0.0, -1.0]},
        ),
        Call(
            PromptPool,
            n_domains=3,
            prompt_tokens=2,
            d_model=D,
            call={"q": torch.randn(4, D)},
            shapes={"q": "B 8"},
            bad={"n_domains": [0], "prompt_tokens": [0], "d_model": [0]},
        ),
        Call(
            TemporalBackbone,
            input_len=L,
            horizon=H,
            patch=2,
            d_model=D,
            layers=1,
            heads=2,
            n_domains=2,
            prompt_tokens=2,
            dropout=0.1,
            band_edges=(0.125, 0.25),
            use_prompts=True,
            call={"x": torch.randn(3, L), "domain": torch.tensor([0, 1, 1]), "mask_ratio": 0.4},
            shapes={"x": "B 12", "domain": "B"},
            bad={
                "input_len": [11, 0],
                "horizon": [0, -1],
                "patch": [5, 0],
                "heads": [3],
                "dropout": [1.0],
                "band_edges": [(0.3, 0.1)],
                "domain": [torch.tensor([0, 1, 2])],
                "mask_ratio": [1.0, -0.1],
                "d_model": [0],
                "layers": [0],
            },
        ),
        Call(
            STAdapter,
            d_model=D,
            n_nodes=N,
            coord_dim=2,
            topk=2,
            layers=1,
            use_meta=True,
            use_prune=True,
            use_align=True,
            n_tokens=6,
            horizon=H,
            seed=0,
            call={
                "z": torch.randn(2, N, 6, D),
                "coords": COORDS,
                "time_feat": TIME,
                "edge_index": EDGES,
            },
            shapes={"z": "B N T 8", "coords": "N 2", "time_feat": "B 2", "edge_index": "2 E"},
            bad={
                "topk": [0],
                "layers": [0],
                "n_nodes": [0],
                "horizon": [0],
                "seed": [-1],
                "time_feat": [
                    torch.tensor([[1.5, 1.0], [0.5, 6.0]]),
                    torch.tensor([[0.5, 7.0], [0.5, 6.0]]),
                ],
                "edge_index": [torch.tensor([[0], [N]])],
            },
        ),
        Call(
            FactoST,
            backbone=fresh(_backbone),
            adapter=fresh(lambda: STAdapter(D, n_nodes=N, topk=2)),
            finetune="frozen",
            call={"x": X, "coords": COORDS, "time_feat": TIME, "edge_index": EDGES},
            shapes={"x": "B N 12", "coords": "N 2", "time_feat": "B 2", "edge_index": "2 E"},
            bad={"backbone": [3], "adapter": [STAdapter(4)], "coords": [torch.rand(N + 1, 2)]},
        ),
        Call(
            factost.sparse_attention,
            q=torch.randn(2, N, D),
            k=torch.randn(2, N, D),
            v=torch.randn(2, N, 3),
            topk=2,
            prior=torch.eye(N, dtype=torch.bool),
            shapes={"q": "B N d", "k": "B N d", "v": "B N e", "prior": "N N"},
            accepts={"q": {"rank"}, "k": set(), "v": set()},
            bad={"topk": [0], "k": [torch.randn(2, N + 1, D)]},
        ),
        Call(
            factost.coral_loss,
            a=torch.randn(6, 3),
            b=torch.randn(9, 3),
            shapes={"a": "n d", "b": "m d"},
        ),
        Call(
            ReplayBuffer,
            name="ReplayBuffer.add",
            capacity=4,
            seed=0,
            method="add",
            call={"x": torch.randn(5, L), "y": torch.randn(5, H)},
            shapes={"x": "n L", "y": "n H"},
            bad={"capacity": [0, HUGE], "seed": [-1]},
        ),
        Call(
            ReplayBuffer,
            name="ReplayBuffer.sample",
            capacity=4,
            seed=0,
            method="sample",
            prepare=lambda b: b.add(torch.randn(5, L), torch.randn(5, H)),
            call={"n": 3},
            bad={"n": [0, HUGE]},
        ),
        Call(factost.count_trainable, model=torch.nn.Linear(2, 2), bad={"model": [3]}),
        Call(factost.knn_graph, coords=torch.rand(6, 2), k=2, bad={"k": [0, 6]}),
        Call(
            factost.prior_mask,
            edge_index=EDGES,
            n_nodes=N,
            shapes={"edge_index": "2 E"},
            bad={"n_nodes": [0, 2]},
        ),
        Call(
            factost.make_st_domain,
            kind="bike",
            n_nodes=6,
            n_steps=100,
            seed=0,
            bad={"n_nodes": [0, 4], "n_steps": [10, HUGE], "seed": [-1]},
        ),
        Call(
            factost.make_domain_suite,
            n_nodes=6,
            days=7,
            seed=0,
            bad={"days": [0, HUGE], "n_nodes": [1]},
        ),
        Call(
            factost.pretrain_backbone,
            backbone=fresh(_backbone),
            series=SERIES,
            epochs=1,
            batch_size=64,
            lr=1e-3,
            stride=4,
            max_windows=100,
            mask_ratio=0.4,
            gamma=0.5,
            key_weight=0.1,
            seed=0,
            bad={
                "series": [
                    INT_SERIES,
                    NAN_SERIES,
                    [],
                    [(np.zeros(5, np.float32), 0)],
                    [(np.zeros(40, np.float32), 5)],
                ],
                "backbone": [3],
                "epochs": [-1, HUGE],
                "batch_size": [0],
                "lr": [0.0],
                "stride": [0],
                "max_windows": [0, HUGE],
                "mask_ratio": [1.0],
                "gamma": [-1.0],
                "seed": [-1],
            },
        ),
        Call(
            factost.adapt,
            model=fresh(_model),
            domain=DOMAIN,
            shots=0.5,
            epochs=1,
            replay=fresh(lambda: ReplayBuffer(8)),
            bad={"shots": [0.0, 1.5], "epochs": [-1], "model": [3], "domain": [3], "replay": [3]},
        ),
        Call(
            factost.fit_forecaster,
            model=fresh(_model),
            domain=DOMAIN,
            shots=0.5,
            epochs=1,
            bad={"shots": [0.0, 1.5], "epochs": [-1, HUGE]},
        ),
        Call(
            factost.evaluate,
            model=fresh(_model),
            domain=DOMAIN,
            split="test",
            bad={"model": [3], "domain": [3]},
        ),
        Call(
            HistoricalAverage,
            input_len=L,
            horizon=H,
            prepare=_fitted_ha,
            call={"x": X, "time_feat": TIME},
            shapes={"x": "B 5 12", "time_feat": "B 2"},
            bad={"horizon": [0], "input_len": [0]},
        ),
        Call(
            SeasonalNaive,
            horizon=H,
            period=24,
            call={"x": torch.randn(2, N, 24)},
            shapes={"x": "B N 24"},
            bad={"horizon": [0], "period": [0]},
        ),
        Call(
            BackboneOnly,
            backbone=BACKBONE,
            call={"x": X},
            shapes={"x": "B N 12"},
            bad={"backbone": [3]},
        ),
        Call(
            BackboneFinetune,
            backbone=BACKBONE,
            call={"x": X},
            shapes={"x": "B N 12"},
            bad={"backbone": [3]},
        ),
        Call(
            STExpert,
            n_nodes=N,
            input_len=L,
            horizon=H,
            channels=4,
            layers=2,
            call={"x": X, "edge_index": EDGES},
            shapes={"x": "B 5 12", "edge_index": "2 E"},
            bad={"layers": [4, 0], "channels": [0], "horizon": [0]},
        ),
        Call(
            JointSTTransformer,
            input_len=L,
            horizon=H,
            patch=2,
            d_model=D,
            layers=1,
            heads=2,
            coord_dim=2,
            dropout=0.0,
            call={"x": X, "coords": COORDS},
            shapes={"x": "B N 12", "coords": "N 2"},
            bad={"patch": [5], "heads": [3], "horizon": [0]},
        ),
        Call(
            factost.pretrain_joint,
            model=fresh(lambda: JointSTTransformer(L, H, 2, D, 1, 2)),
            domains=[DOMAIN],
            epochs=1,
            time_limit=0.5,
            bad={"model": [3], "domains": [[], [3]], "epochs": [-1], "time_limit": [0.0]},
        ),
    ],
    exempt={
        "STDomain": "a plain record built by make_st_domain from checked arguments; its span and "
        "windows check theirs (test_data.py)",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
