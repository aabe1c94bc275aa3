import copy
import math

import torch
from torch import nn

import gora
from paperkit.testing import BadInputs, Call, fresh

NAN, INF = math.nan, math.inf


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def loss(model, batch):
    return nn.functional.cross_entropy(model(batch[0]), batch[1])


def nan_loss(model, batch):
    return loss(model, batch) * NAN


def nan_model():
    model = mlp()
    with torch.no_grad():
        model[0].weight[0, 0] = NAN
    return model


def with_nan(t):
    t = t.clone()
    t.reshape(-1)[0] = NAN
    return t


gen = torch.Generator().manual_seed(0)
X, Y = torch.randn(10, 6, generator=gen), torch.randint(0, 3, (10,), generator=gen)
BATCHES = [(X, Y)]
NAN_BATCHES = [(with_nan(X), Y)]
TARGETS = ["0", "2"]
PLAN = gora.plan_gora(mlp(), BATCHES, loss, TARGETS, base_rank=2, lora_alpha=4.0, n_steps=1)
NAN_PLAN = copy.deepcopy(PLAN)
NAN_PLAN.factors["0"][0][0, 0] = NAN
A0, B0 = PLAN.factors["0"]
W, G = torch.randn(5, 4, generator=gen), torch.randn(5, 4, generator=gen)
SHAPES = {"a": (8, 8), "b": (8, 4)}


def peft_model():
    return gora.apply_plan(mlp(), PLAN, "peft")


# `shapes` is a keyword of Call itself, so these two take the layer shapes under another name;
# their refusals of bad shapes are tested in test_allocation.py.
def allocate_ranks(importances, layer_shapes, **kw):
    return gora.allocate_ranks(importances, layer_shapes, **kw)


def lora_budget(layer_shapes, r):
    return gora.lora_budget(layer_shapes, r)


SUITE = BadInputs(
    gora,
    [
        Call(
            allocate_ranks,
            importances={"a": 2.0, "b": 1.0},
            layer_shapes=SHAPES,
            base_rank=4,
            r_min=1,
            r_max=16,
            rounding="round",
            budget=100,
            softmax=False,
            temperature=0.5,
            bad={
                "importances": [
                    {"a": NAN, "b": 1.0},
                    {"a": INF, "b": 1.0},
                    {"a": -1.0, "b": 1.0},
                    {"a": 0.0, "b": 0.0},
                    {"a": "high", "b": 1.0},
                    {},
                    [2.0, 1.0],
                ],
                "base_rank": [0],
                "r_min": [-1, 17],
                "r_max": [0],
                "budget": [27, True],  # one rank per layer needs 28
                "temperature": [0.0],
            },
        ),
        Call(
            gora.importance_scores,
            weights={"x": W},
            grads={"x": G},
            kind="mean_abs_wg",
            bad={
                "grads": [{"x": with_nan(G)}, {"x": G.T}, {"x": G.long()}, {}, {"x": "G"}],
                "weights": [{"x": with_nan(W)}, {}, "W"],
            },
        ),
        Call(
            lora_budget,
            layer_shapes=SHAPES,
            r=2,
            bad={"r": [-1, {"a": 1}, {"a": 1, "b": -2}, {"a": 1, "b": 0.5}]},
        ),
        Call(gora.lora_scaling, alpha=16.0, rank=4, rslora=True, bad={"alpha": [0.0], "rank": [0]}),
        Call(
            gora.kaiming_a,
            rank=3,
            in_features=5,
            dtype=torch.float32,
            generator=None,
            bad={
                "rank": [0, 10**12],
                "in_features": [0],
                "dtype": [torch.int64, "float32"],
                "generator": [3],
            },
        ),
        Call(
            gora.init_factors,
            G=torch.randn(4, 6, generator=gen),
            rank=2,
            alpha=8.0,
            gamma=0.05,
            rslora=True,
            generator=None,
            shapes={"G": "m n"},
            bad={"rank": [0, 10**12], "alpha": [0.0], "gamma": [-0.1], "generator": [3]},
        ),
        Call(
            gora.GoRALinear,
            base=nn.Linear(7, 5),
            rank=3,
            alpha=8.0,
            rslora=True,
            A=torch.randn(3, 7, generator=gen),
            B=torch.randn(5, 3, generator=gen),
            generator=None,
            call={"x": torch.randn(4, 7, generator=gen)},
            shapes={"A": "r 7", "B": "5 r", "x": "N 7"},
            bad={"base": [nn.Conv1d(2, 2, 1), "linear"], "rank": [0, 10**12], "alpha": [0.0]},
            # x is (..., in) like nn.Linear's input, and NaN propagates as through nn.Linear.
            accepts={"x": {"nan", "inf", "empty", "rank"}},
        ),
        Call(
            gora.DigitsEncoder,
            n_classes=3,
            dim=16,
            heads=2,
            layers=1,
            rows=8,
            pixels=8,
            call={"x": torch.rand(2, 8, 8, generator=gen)},
            shapes={"x": "B 8 8"},
            bad={
                "n_classes": [0],
                "dim": [0, 10**6],
                "heads": [0, 3],
                "layers": [0, 10**9],
                "rows": [0],
                "pixels": [0],
            },
        ),
        Call(
            gora.find_targets,
            model=fresh(mlp),
            target_modules=TARGETS,
            bad={"model": ["model"], "target_modules": [["9"], ["1"], "0", [], [0]]},
        ),
        Call(
            gora.collect_gradients,
            model=fresh(mlp),
            batches=BATCHES,
            loss_fn=loss,
            target_modules=TARGETS,
            n_steps=2,
            adaptive=False,
            tol=0.1,
            min_steps=1,
            device="cpu",
            bad={
                "model": [nan_model(), "model"],
                "batches": [NAN_BATCHES, [], 3, "batches"],
                "loss_fn": [nan_loss, "loss", lambda m, b: torch.ones(2)],
                "target_modules": [["9"], ["1"]],
                "n_steps": [0],
                "tol": [0.0],
                "min_steps": [0],
            },
        ),
        Call(
            gora.plan_gora,
            model=fresh(mlp),
            batches=BATCHES,
            loss_fn=loss,
            target_modules=TARGETS,
            base_rank=2,
            lora_alpha=4.0,
            r_min=1,
            r_max=8,
            n_steps=1,
            adaptive=False,
            tol=0.1,
            min_steps=1,
            importance="mean_abs_wg",
            rounding="round",
            softmax=False,
            gamma=0.05,
            rslora=True,
            allocate=True,
            init="gradient",
            generator=None,
            device="cpu",
            bad={
                "model": [nan_model()],
                "batches": [NAN_BATCHES],
                "loss_fn": [nan_loss],
                "target_modules": [["9"]],
                "base_rank": [0],
                "lora_alpha": [0.0],
                "r_min": [9],
                "r_max": [0],
                "n_steps": [0],
                "gamma": [-1.0],
                "generator": [3],
            },
        ),
        Call(
            gora.plan_gora,
            name="plan_gora_uniform_ranks",
            model=fresh(mlp),
            batches=BATCHES,
            loss_fn=loss,
            target_modules=TARGETS,
            base_rank=2,
            allocate=False,
            bad={"base_rank": [10**12]},  # factors that would not fit in memory
        ),
        Call(
            gora.apply_plan,
            model=fresh(mlp),
            plan=PLAN,
            backend="native",
            modules_to_save=None,
            bad={
                "model": [nn.Linear(2, 2), "model"],
                "plan": ["plan", NAN_PLAN],
                "modules_to_save": [["nothere"], "0"],
            },
        ),
        Call(
            gora.apply_gora,
            model=fresh(mlp),
            batches=BATCHES,
            loss_fn=loss,
            target_modules=TARGETS,
            base_rank=2,
            lora_alpha=4.0,
            backend="native",
            modules_to_save=None,
            n_steps=1,
            gamma=0.05,
            bad={
                "batches": [NAN_BATCHES],
                "loss_fn": [nan_loss],
                "target_modules": [["9"]],
                "modules_to_save": [["nothere"]],
                "n_steps": [0],
            },
        ),
        Call(
            gora.to_peft_config,
            ranks={"0": 2, "2": 3},
            lora_alpha=8.0,
            target_modules=None,
            use_rslora=True,
            bad={
                "ranks": [{"0": -1}, {"0": 1.5}, {}, {"0": 0}, [2, 3]],
                "lora_alpha": [0.0],
                "target_modules": ["0", [0]],
            },
        ),
        Call(
            gora.load_factors_into_peft,
            peft_model=fresh(peft_model),
            factors=PLAN.factors,
            adapter_name="default",
            bad={
                "peft_model": [mlp(), "model"],
                "factors": [
                    {"0": (with_nan(A0), B0)},
                    {"0": (A0[:-1], B0)},
                    {"nope": (A0, B0)},
                    {"0": A0},
                    "factors",
                ],
            },
        ),
        Call(
            gora.peft_lora_layers,
            peft_model=fresh(peft_model),
            adapter_name="default",
            bad={"peft_model": [mlp(), 3]},
        ),
    ],
    exempt={
        "GoRAPlan": "the record plan_gora returns; apply_plan checks a plan it is given "
        "(its type, layers, factor shapes and finiteness)",
    },
)
test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
