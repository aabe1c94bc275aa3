import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import gmpqte
from gmpqte import GMPQTE, QuantLayer, SmallCNN
from paperkit.testing import BadInputs, Call, fresh

torch.manual_seed(0)
MODEL = gmpqte.small_cnn().eval()
IMAGES = torch.rand(4, 1, 8, 8)
LABELS = torch.zeros(4, dtype=torch.int64)
SHAPES = {"images": "B C H W", "labels": "B"}
N = {"a": 10.0, "b": 20.0, "c": 30.0}
TE = {"a": 1.0, "b": 2.0, "c": 0.5}
BIG = 10**12
DIAGRAM = np.array([[0.0, 1.0], [0.2, 0.5], [0.1, 0.9]])
TE_ARGS = dict(
    model=MODEL,
    images=IMAGES,
    layers=["conv3", "fc"],
    mode="cubical",
    summary="persistent",
    max_channels=2,
    seed=0,
    labels=LABELS,
    allow_mixed=False,
    skip_constant=True,
    dims="sum",
    shapes=SHAPES,
    bad={"layers": [[], ["pool"], "conv1"], "max_channels": [0], "seed": [-1]},
)

SUITE = BadInputs(
    gmpqte,
    [
        Call(gmpqte.persistent_entropy, diagram=DIAGRAM, accepts={"diagram": {"empty"}}),
        Call(
            gmpqte.betti_curve,
            diagram=DIAGRAM,
            grid=np.linspace(0, 1, 5),
            accepts={"diagram": {"empty"}},
            bad={"diagram": [np.array([[1.0, 0.0]])]},
        ),
        Call(gmpqte.betti_entropy, diagram=DIAGRAM, grid=None, accepts={"diagram": {"empty"}}),
        Call(
            gmpqte.cubical_diagrams,
            f=np.random.default_rng(0).random((6, 6)),
            superlevel=True,
            normalize=True,
        ),
        Call(
            gmpqte.rips_diagrams,
            points=np.random.default_rng(0).random((6, 3)),
            maxdim=1,
            bad={"maxdim": [-1, 3]},
        ),
        Call(gmpqte.layer_topological_entropy, **TE_ARGS),
        Call(gmpqte.layer_te_details, **TE_ARGS),
        Call(gmpqte.quantisable_layers, model=MODEL, bad={"model": [3]}),
        Call(
            GMPQTE,
            mode="cubical",
            summary="persistent",
            max_channels=2,
            seed=0,
            bit_choices=(2, 4, 8),
            higher_te_more_bits=True,
            objective="bits",
            skip_constant=True,
            dims="sum",
            a_bits=8,
            method="fit",
            call={"model": MODEL, "images": IMAGES, "labels": LABELS, "layers": ["conv4", "fc"]},
            shapes=SHAPES,
            bad={"bit_choices": [(), (0, 2)], "max_channels": [0], "a_bits": [0]},
        ),
        Call(
            GMPQTE,
            name="GMPQTE.policy",
            max_channels=2,
            method="policy",
            prepare=lambda est: est.fit(MODEL, IMAGES[:2]),
            call={"budget_bits": 3.0 * 33040, "budget_bops": None, "fixed": None},
            bad={"budget_bits": [-1.0, 10.0], "fixed": [{"pool": 8}]},
        ),
        Call(
            gmpqte.solve_bit_allocation,
            te=TE,
            n_params=N,
            budget_bits=200.0,
            bit_choices=(2, 4, 8),
            bops=None,
            budget_bops=None,
            fixed=None,
            higher_te_more_bits=True,
            objective="bits",
            a_bits=8,
            return_info=False,
            bad={
                "te": [{}, {"a": -1.0, "b": 1.0, "c": 1.0}, {"a": math.nan, "b": 1.0, "c": 1.0}],
                "n_params": [{"a": 1.0}, {"a": 1.0, "b": 1.0, "c": math.inf}],
                "budget_bits": [-1.0, 10.0],
                "bit_choices": [(0, 2), (2, 64)],
                "bops": [{"a": 1.0, "b": 1.0, "c": 1.0}],  # without budget_bops
                "fixed": [{"z": 8}, {"a": 0}],
                "a_bits": [0],
            },
        ),
        Call(gmpqte.policy_bits, policy={"a": 2, "b": 4}, n_params={"a": 1.0, "b": 3.0}),
        Call(
            gmpqte.hawq_trace_sensitivity,
            model=MODEL,
            loss_fn=F.cross_entropy,
            batches=[(IMAGES, LABELS)],
            n_probe=1,
            layers=["fc"],
            seed=0,
            bad={
                "batches": [[], "abc", [(IMAGES,)], [(IMAGES * math.nan, LABELS)]],
                "n_probe": [0, 10**9],
                "loss_fn": [3],
                "layers": [[]],
            },
        ),
        Call(
            gmpqte.hawq_policy,
            model=MODEL,
            traces={"conv1": 0.1, "fc": 0.01},
            budget_bits=3.0 * 784,
            bit_choices=(2, 4, 8),
            bops=None,
            budget_bops=None,
            fixed=None,
            a_bits=8,
            bad={"traces": [{"pool": 1.0}, {}], "budget_bits": [-1.0, 100.0]},
        ),
        Call(
            gmpqte.measured_sensitivity,
            model=MODEL,
            images=IMAGES,
            labels=LABELS,
            bits=2,
            layers=["fc"],
            a_bits=None,
            shapes=SHAPES,
            bad={"bits": [0], "layers": [[]]},
        ),
        Call(gmpqte.uniform_policy, layers=["a", "b"], bits=3, bad={"layers": [[]], "bits": [0]}),
        Call(
            gmpqte.random_policy,
            n_params=N,
            budget_bits=200.0,
            seed=0,
            bit_choices=(2, 4, 8),
            fixed=None,
            bad={"budget_bits": [-1.0, 10.0], "seed": [-1], "n_params": [{}]},
        ),
        Call(gmpqte.quantize_weight, w=torch.randn(4, 3), bits=2, accepts={"w": {"rank"}}),
        Call(gmpqte.quantize_activation, x=torch.rand(5), bits=8, accepts={"x": {"rank"}}),
        Call(QuantLayer, layer=nn.Linear(3, 2), bits=4, a_bits=8, bad={"layer": [nn.ReLU()]}),
        Call(
            gmpqte.quantize_model,
            model=MODEL,
            policy={"conv1": 2, "fc": 4},
            a_bits=8,
            bad={"policy": [{}, {"pool": 2}, {"conv1": 0}], "a_bits": [0]},
        ),
        Call(SmallCNN, num_classes=10, in_channels=1, channels=(4, 4, 4, 4)),
        Call(gmpqte.small_cnn, num_classes=10, in_channels=1, bad={"num_classes": [1]}),
        Call(gmpqte.fold_batchnorm, model=MODEL, bad={"model": [nn.Linear(2, 2)]}),
        Call(gmpqte.digits16, seed=0, test_size=0.3, bad={"seed": [-1], "test_size": [0.0, 1.0]}),
        Call(gmpqte.shapes8x8, n=8, seed=0, bad={"n": [0, BIG], "seed": [-1]}),
        Call(
            gmpqte.same_label_batch,
            images=IMAGES,
            labels=LABELS,
            label=None,
            batch_size=2,
            seed=0,
            shapes=SHAPES,
            bad={"batch_size": [0]},
        ),
        Call(gmpqte.upsample, images=IMAGES, size=8, bad={"size": [0]}),
        Call(
            gmpqte.train_classifier,
            model=fresh(gmpqte.small_cnn),
            images=IMAGES,
            labels=LABELS,
            epochs=1,
            lr=1e-3,
            batch_size=2,
            seed=0,
            shapes=SHAPES,
            bad={"epochs": [-1], "lr": [0.0], "batch_size": [0]},
        ),
        Call(gmpqte.accuracy, model=MODEL, images=IMAGES, labels=LABELS, shapes=SHAPES),
    ],
    exempt={"LayerTE": "a frozen record returned by layer_te_details"},
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
