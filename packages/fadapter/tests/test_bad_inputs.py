"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range and resource-sized values listed in ``bad``)."""

import numpy as np
import torch

import fadapter
from fadapter import AFNO2d, FAdapterAFNO2d, OperatorNet
from paperkit.testing import BadInputs, Call, fresh


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


x8 = _rand(2, 8, 8, 8, seed=1)
grid = np.random.default_rng(0).standard_normal((8, 8))
X = {"x": "B H W 8"}


def _layer():
    return AFNO2d(8, num_blocks=2, modes=3)


def _net():
    return OperatorNet(in_frames=2, width=8, depth=1, num_blocks=2, modes=3)


SUITE = BadInputs(
    fadapter,
    [
        Call(
            AFNO2d,
            width=8,
            num_blocks=2,
            modes=3,
            hidden_factor=1,
            mode_set="corner",
            call={"x": x8},
            shapes=X,
            bad={"width": [0, 10**6], "num_blocks": [0, 3], "modes": [0], "hidden_factor": [0]},
        ),
        Call(
            FAdapterAFNO2d.from_layer,
            name="FAdapterAFNO2d.from_layer",
            layer=fresh(_layer),
            adapter_dim=4,
            num_bands=2,
            power=2.0,
            min_dim_factor=0.5,
            max_dim_factor=2.0,
            band_shape="radial",
            scale=1.0,
            call={"x": x8},
            shapes=X,
            bad={
                "num_bands": [0, 4],
                "adapter_dim": [0],
                "power": [-1.0],
                "min_dim_factor": [0.0],
                "max_dim_factor": [0.1],
                "layer": [torch.nn.Linear(2, 2)],
            },
        ),
        Call(
            fadapter.AdapterAFNO2d.from_layer,
            name="AdapterAFNO2d.from_layer",
            layer=fresh(_layer),
            adapter_dim=3,
            scale=1.0,
            call={"x": x8},
            shapes=X,
            bad={"adapter_dim": [0, 10**9]},
        ),
        Call(
            fadapter.LoRAAFNO2d,
            base=fresh(_layer),
            rank=2,
            alpha=2.0,
            call={"x": x8},
            shapes=X,
            bad={"rank": [0], "alpha": [0.0, -1.0], "base": [torch.nn.Linear(2, 2)]},
        ),
        Call(
            fadapter.LoRALinear,
            base=fresh(lambda: torch.nn.Linear(8, 4)),
            rank=2,
            alpha=2.0,
            call={"x": _rand(3, 8, seed=2)},
            shapes={"x": "N 8"},
            accepts={"x": {"nan", "inf", "rank"}},  # as nn.Linear: NaN propagates, any batch dims
            bad={"rank": [0], "alpha": [0.0]},
        ),
        Call(
            OperatorNet,
            in_frames=2,
            channels=1,
            width=8,
            depth=1,
            num_blocks=2,
            modes=3,
            mlp_ratio=2.0,
            patch=2,
            call={"x": _rand(2, 16, 16, 2, seed=3)},
            shapes={"x": "B H W 2"},
            bad={"width": [0, 10**6], "depth": [0], "patch": [0], "mlp_ratio": [0.0]},
        ),
        Call(
            fadapter.apply_peft,
            # passed as a dict: "method" is also an option of Call
            {
                "model": fresh(_net),
                "method": "fadapter",
                "adapter_dim": 2,
                "num_bands": 3,
                "power": 1.0,
            },
            bad={"adapter_dim": [0], "num_bands": [4], "power": [-2.0]},
        ),
        Call(
            fadapter.apply_peft,
            {"model": fresh(_net), "method": "lora", "rank": 2, "alpha": 4.0},
            name="apply_peft-lora",
            bad={"rank": [0], "alpha": [0.0]},
        ),
        Call(fadapter.count_trainable, model=fresh(_net)),
        Call(
            fadapter.band_dims,
            modes=8,
            num_bands=4,
            adapter_dim=4,
            power=2.0,
            min_dim_factor=0.5,
            max_dim_factor=2.0,
            bad={"modes": [0, 10**7], "num_bands": [0, 9], "adapter_dim": [0], "power": [-1.0]},
        ),
        Call(
            fadapter.band_index,
            modes=4,
            num_bands=2,
            mode_set="corner",
            band_shape="radial",
            bad={"modes": [0, 10**7], "num_bands": [0, 5]},
        ),
        Call(
            fadapter.l2re,
            pred=_rand(3, 4, 4, seed=4),
            true=_rand(3, 4, 4, seed=5),
            shapes={"pred": "N H W", "true": "N H W"},
            bad={"true": [torch.zeros(3, 4, 4)]},
        ),
        Call(
            fadapter.band_errors,
            pred=_rand(2, 8, 8, seed=6),
            true=_rand(2, 8, 8, seed=7),
            n_bands=2,
            shapes={"pred": "N H W", "true": "N H W"},
            bad={"n_bands": [0, 100]},
        ),
        Call(
            fadapter.ns_solve,
            w0=grid,
            t_final=0.04,
            dt=0.01,
            nu=1e-3,
            forcing=0.1 * grid,
            record_every=2,
            shapes={"w0": "R R", "forcing": "R R"},
            bad={
                "t_final": [0.0, -1.0],
                "dt": [0.0, 1.0, 1e-9],
                "nu": [-1.0],
                "record_every": [0, 5],
            },
        ),
        Call(
            fadapter.navier_stokes_2d,
            n_traj=1,
            res=8,
            steps=2,
            dt=0.01,
            record_every=2,
            nu=1e-3,
            forcing="li2020",
            seed=0,
            bad={
                "n_traj": [0, 10**9],
                "res": [0, 10**6],
                "steps": [0],
                "dt": [0.0],
                "nu": [-1.0],
                "seed": [-1],
                "record_every": [0],
            },
        ),
        Call(fadapter.velocity, w=grid, shapes={"w": "R R"}),
        Call(
            fadapter.lora_depth_probe,
            depths=[1],
            rank=1,
            width=4,
            delta=0.5,
            steps=1,
            seed=0,
            bad={
                "depths": [[0], [10**4]],
                "rank": [0, 5],
                "width": [1],
                "delta": [0.0],
                "steps": [0],
            },
        ),
        Call(
            fadapter.adapter_width_probe,
            widths=[1, 2],
            features=4,
            decay=0.6,
            steps=1,
            seed=0,
            bad={"widths": [[5]], "decay": [0.0, 1.0], "features": [1], "steps": [0]},
        ),
    ],
    exempt={
        "FAdapterAFNO2d": "built through FAdapterAFNO2d.from_layer, whose Call covers it",
        "AdapterAFNO2d": "built through AdapterAFNO2d.from_layer, whose Call covers it",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
