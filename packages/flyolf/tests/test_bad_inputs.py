"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range and resource-sized values listed in ``bad``)."""

import numpy as np
import torch

import flyolf
from paperkit.testing import BadInputs, Call

BIG = 10**9  # a size whose work would not fit
TINY = flyolf.CircuitConfig(n_kc=40, w_pk=0.01, steps=10, pre_steps=2)
rates = flyolf.odor_prototypes(4, 50, seed=0)
counts = np.random.default_rng(0).poisson(1.0, (6, 5)).astype(np.float64)
labels = np.array([0, 1, 0, 1, 0, 1])
readout = flyolf.train_readout(counts, labels)
task = flyolf.make_odor_task(n_classes=2, n_train=2, n_test=2, noise=0.5)

SUITE = BadInputs(
    flyolf,
    [
        Call(
            flyolf.CircuitConfig,
            n_orn=50,
            n_kc=40,
            pn_per_kc=7,
            dt=1e-3,
            steps=10,
            pre_steps=2,
            tau_m=0.02,
            tau_s=0.005,
            tau_a=0.1,
            tau_apl=0.01,
            theta=1.0,
            refractory=0.002,
            w_pk=0.01,
            g_li=0.0,
            g_sfa=0.0,
            pn_normalization=True,
            seed=0,
            bad={
                "dt": [0.0, 0.005, 0.5],
                "pn_per_kc": [0, 51],
                "n_orn": [0],
                "n_kc": [0, BIG],
                "steps": [0, BIG],
                "tau_m": [0.0, -1.0],
                "theta": [0.0],
                "refractory": [-0.001],
                "w_pk": [-1.0],
                "g_li": [-0.1],
                "g_sfa": [-0.1],
                "seed": [-1],
            },
        ),
        Call(
            flyolf.FlyCircuit,
            cfg=TINY,
            sparse=False,
            call={"orn_rates": rates, "record": True},
            shapes={"orn_rates": "B 50"},
            bad={"orn_rates": [-rates]},
        ),
        Call(flyolf.connectivity, cfg=TINY),
        Call(
            flyolf.simulate_kc,
            current=torch.full((2, 3), 1.5),
            cfg=TINY,
            record_v=True,
            accepts={"current": {"rank"}},  # (B, N) constant or (B, T, N) per step
        ),
        Call(flyolf.pn_rates, orn_rates=rates, normalization=True, bad={"orn_rates": [-rates]}),
        Call(
            flyolf.spike_fn,
            x=torch.randn(5),
            slope=10.0,
            bad={"slope": [0.0, -1.0]},
            accepts={"x": {"rank", "empty"}},  # elementwise: any shape
        ),
        Call(
            flyolf.fast_sigmoid,
            x=torch.randn(5),
            slope=10.0,
            bad={"slope": [0.0]},
            accepts={"x": {"rank", "empty"}},
        ),
        Call(
            flyolf.odor_prototypes,
            n_classes=3,
            n_orn=50,
            seed=0,
            bad={"n_classes": [0, BIG], "n_orn": [0, BIG], "seed": [-1]},
        ),
        Call(
            flyolf.add_noise,
            rates=rates,
            noise=0.5,
            noise_kind="gaussian",
            seed=0,
            bad={"rates": [-rates], "noise": [-0.5, 1e3], "seed": [-1]},
        ),
        Call(
            flyolf.make_odor_task,
            n_classes=3,
            n_train=2,
            n_test=2,
            noise=0.5,
            noise_kind="background",
            seed=0,
            n_orn=50,
            bad={
                "n_classes": [1, BIG],
                "n_train": [0, BIG],
                "n_test": [0, BIG],
                "noise": [-1.0],
                "seed": [-1],
                "n_orn": [0],
            },
        ),
        Call(flyolf.calibration_odors, cfg=TINY, count=4, bad={"count": [0, BIG]}),
        Call(
            flyolf.calibrate,
            cfg=TINY,
            odors=rates,
            mechanism="li",
            target_coding=0.1,
            iters=2,
            shapes={"odors": "B 50"},
            bad={"odors": [-rates], "target_coding": [0.0, 1.0], "iters": [0, BIG]},
        ),
        Call(
            flyolf.calibrate,
            name="calibrate-sfa",
            cfg=TINY,
            odors=rates,
            mechanism="sfa",
            target_count=1e9,
            iters=2,
            bad={"target_count": [0.0, -1.0]},
        ),
        Call(
            flyolf.learn_gains,
            task=task,
            cfg=TINY,
            epochs=1,
            lr=0.05,
            l2=1e-3,
            seed=0,
            bad={"epochs": [0, BIG], "lr": [0.0, -1.0], "l2": [-1.0], "seed": [-1]},
        ),
        Call(
            flyolf.train_readout,
            counts=counts,
            labels=labels,
            kind="logistic",
            l2=1e-3,
            eta=0.5,
            shapes={"counts": "B N", "labels": "B"},
            bad={"counts": [-counts], "l2": [0.0], "eta": [0.0, 1.5], "labels": [np.zeros(6, int)]},
        ),
        Call(readout.predict, name="Readout.predict", counts=counts, shapes={"counts": "B 5"}),
        Call(
            readout.score,
            name="Readout.score",
            counts=counts,
            labels=labels,
            shapes={"counts": "B 5", "labels": "B"},
        ),
        Call(flyolf.coding_level, counts=counts, bad={"counts": [-counts]}),
        Call(flyolf.lifetime_sparseness, counts=counts, bad={"counts": [counts[:1]]}),
        Call(flyolf.pattern_separation, responses=counts, bad={"responses": [counts[:1]]}),
        Call(
            flyolf.noise_robustness,
            clean=counts,
            noisy=counts + 1,
            shapes={"clean": "B N", "noisy": "B N"},
        ),
    ],
    exempt={
        "CircuitOutput": "a NamedTuple record of FlyCircuit's outputs; it computes nothing",
        "OdorTask": "a NamedTuple record of make_odor_task's outputs; it computes nothing",
        "Readout": "built by train_readout; its predict and score are declared above",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
