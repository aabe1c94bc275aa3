"""Every public entry point of dictpfl with one valid call; the shared suite derives the bad ones.

The HE entry points run real TenSEAL CKKS, with small parameters (N = 4096) to stay fast.
"""

import dataclasses

import numpy as np
import tenseal as ts
import torch
from torch import nn

import dictpfl
from dictpfl import MLP, HEContext, decompose_model, make_federated_digits
from paperkit.testing import BadInputs, Call, fresh

HUGE = 10**13  # sizes memory far beyond any machine: refused by check_memory
BITS = (35, 30, 35)  # 100 bits: within the HE standard's 109 for N = 4096
SMALL = HEContext.create(n=4096, coeff_bits=BITS, scale_bits=30)
SERVER = HEContext.from_bytes(SMALL.public())
RAW = ts.context(ts.SCHEME_TYPE.CKKS, 4096, coeff_mod_bit_sizes=list(BITS))
CHUNKS = SMALL.encrypt(np.linspace(-1, 1, 5000))  # two ciphertexts
SHORTER = SMALL.encrypt(np.zeros(3000))  # one ciphertext
DATA = make_federated_digits(clients=2, seed=0)


def _with_client0(X):
    return dataclasses.replace(DATA, clients=[(X, DATA.clients[0][1]), DATA.clients[1]])


NAN_DATA = _with_client0(torch.where(torch.arange(64) == 3, float("nan"), DATA.clients[0][0]))
NARROW_DATA = _with_client0(DATA.clients[0][0][:, :32])  # a client with 32 features, not 64


def _frozen():
    model = MLP(8, [6], 3)
    for p in model.parameters():
        p.requires_grad_(False)
    return model


MODEL_CASES = {"model": ["an MLP", fresh(_frozen)]}

SUITE = BadInputs(
    dictpfl,
    [
        Call(
            dictpfl.DictLinear,
            weight=torch.randn(6, 4),
            bias=torch.randn(6),
            rank=2,
            train_bias=False,
            call={"x": torch.randn(3, 4)},
            shapes={"weight": "o i", "bias": "o", "x": "n i"},
            bad={"rank": [0, 5]},
            accepts={"x": ["rank"]},  # any leading axes: (..., d_in), by design
        ),
        Call(
            decompose_model,
            model=fresh(lambda: MLP(8, [6], 3)),
            rank=2,
            include=(nn.Linear,),
            skip=("head",),
            train_bias=False,
            bad={"model": ["x"], "rank": [0, 7], "include": [(nn.Conv1d,), ()], "skip": ["head"]},
        ),
        *(
            Call(fn, model=fresh(lambda: MLP(8, [6], 3)), bad={"model": ["x", _frozen()]})
            for fn in (dictpfl.lookup_parameters, dictpfl.flatten_tables, dictpfl.shared_numel)
        ),
        Call(
            dictpfl.unflatten_into,
            model=fresh(lambda: decompose_model(MLP(8, [6], 3), 2)),
            vec=torch.zeros(2 * 8 + 7 * 3),
            bad={"model": ["x"], "vec": [torch.zeros(2 * 8 + 7 * 3 + 1)]},
        ),
        Call(
            dictpfl.PrMEMask,
            n_params=50,
            prune_ratio=0.7,
            reactivation=0.2,
            decay=0.5,
            seed=0,
            method="mask",
            prepare=lambda m: m.update(np.linspace(-1, 1, 50)),
            call={"round": 1},
            bad={
                "n_params": [0, HUGE],
                "prune_ratio": [1.0, -0.1],
                "reactivation": [1.5],
                "decay": [1.0],
                "seed": [-1],
                "round": [-1],
            },
        ),
        Call(
            dictpfl.PrMEMask,
            name="PrMEMask.update",
            n_params=50,
            method="update",
            call={"global_delta": np.linspace(-1, 1, 50)},
            bad={"global_delta": [np.zeros(49)]},
        ),
        Call(
            dictpfl.HEContext,
            context=fresh(lambda: RAW),
            n=4096,
            coeff_bits=BITS,
            scale_bits=30,
            method="encrypt",
            call={"vec": np.linspace(-1, 1, 10)},
            bad={
                "context": ["ctx"],
                "n": [1000],
                "coeff_bits": [(60, 60), (35, 30, 70)],
                "scale_bits": [19, 31],
                "vec": [np.array([100.0])],  # beyond max_abs = 16: CKKS would wrap around
            },
        ),
        Call(
            HEContext.create,
            name="HEContext.create",
            n=4096,
            coeff_bits=BITS,
            scale_bits=30,
            bad={"n": [1000], "coeff_bits": [(60, 40, 40, 60)], "scale_bits": [19]},
        ),
        Call(
            HEContext.from_bytes,
            name="HEContext.from_bytes",
            b=SMALL.public(),
            secret=False,
            bad={"b": [b"junk", "text"], "secret": [True]},  # public bytes hold no secret key
        ),
        Call(SMALL.to_bytes, name="HEContext.to_bytes", secret=True),
        Call(SMALL.n_chunks, name="HEContext.n_chunks", length=9000, bad={"length": [-1]}),
        Call(
            SMALL.decrypt,
            name="HEContext.decrypt",
            chunks=CHUNKS,
            bad={"chunks": [[b"junk"], b"junk", ["text"]]},
        ),
        Call(
            SERVER.weighted_sum,
            name="HEContext.weighted_sum",
            list_of_chunks=[CHUNKS, CHUNKS],
            weights=[0.25, 0.75],
            bad={
                "list_of_chunks": [[], [[b"junk"]], [CHUNKS, SHORTER]],
                "weights": [[0.5], [2.0, 0.5]],
            },
        ),
        Call(
            SERVER.check_ciphertexts,
            name="HEContext.check_ciphertexts",
            chunks=CHUNKS,
            length=5000,
            bad={"chunks": [[b"junk"], SHORTER, "text"], "length": [-1, 2.5]},
        ),
        Call(
            MLP,
            d_in=4,
            hidden=[3],
            n_classes=2,
            call={"x": torch.randn(5, 4)},
            shapes={"x": "n 4"},
            bad={"d_in": [0, HUGE], "hidden": [[0], [10**7, 10**7]], "n_classes": [1, HUGE]},
        ),
        Call(
            dictpfl.accuracy,
            model=MLP(4, [3], 2),
            X=torch.randn(6, 4),
            y=torch.tensor([0, 1, 0, 1, 1, 0]),
            shapes={"X": "n d", "y": "n"},
            bad={"model": ["x"]},
        ),
        Call(
            dictpfl.pretrained_mlp,
            data=DATA,
            hidden=(8,),
            epochs=1,
            lr=1e-3,
            batch_size=64,
            seed=0,
            bad={
                "data": ["digits", NAN_DATA, NARROW_DATA],
                "hidden": [(0,)],
                "epochs": [0],
                "lr": [0.0, -1.0],
                "batch_size": [0],
            },
        ),
        Call(
            make_federated_digits,
            clients=2,
            alpha=0.5,
            public_frac=0.3,
            seed=0,
            test_frac=0.2,
            noise=0.0,
            bad={
                "clients": [1, 1000],
                "alpha": [0.0],
                "public_frac": [0.0, 1.0],
                "test_frac": [1.0],
                "noise": [-1.0],
                "seed": [-1],
            },
        ),
        Call(
            dictpfl.dirichlet_split,
            y=np.repeat(np.arange(3), 10),
            clients=2,
            alpha=1.0,
            rng=fresh(lambda: np.random.default_rng(0)),
            min_size=2,
            bad={"clients": [1, 100], "alpha": [0.0], "rng": [0], "min_size": [-1]},
        ),
        Call(
            dictpfl.run_federated,
            method="dictpfl",
            data=DATA,
            rounds=1,
            clients=2,
            rank=2,
            prune_ratio=0.7,
            reactivation=0.2,
            bandwidth_mbps=100.0,
            seed=0,
            model=fresh(lambda: MLP(64, [8], 10)),
            he=fresh(lambda: SMALL),
            engine="inprocess",
            encrypt=True,
            decay=0.5,
            error_feedback=False,
            fedml_frac=0.1,
            local_epochs=1,
            lr=1e-3,
            batch_size=32,
            faults=None,
            round_timeout=60.0,
            setup_timeout=60.0,
            keep_payloads=False,
            bad={
                "data": ["digits", NAN_DATA, NARROW_DATA],
                "rounds": [0],
                "clients": [1, 3],
                "rank": [0, 9],  # the MLP's smallest layer is 8 wide
                "prune_ratio": [1.0],
                "reactivation": [1.5],
                "bandwidth_mbps": [0.0],
                "seed": [-1],
                "model": ["x", fresh(lambda: MLP(32, [8], 10)), fresh(lambda: MLP(64, [8], 3))],
                "engine": ["ray"],
                "he": ["x", fresh(lambda: SERVER)],  # a public context: clients cannot decrypt
                "decay": [1.0],
                "fedml_frac": [0.0],
                "local_epochs": [0],
                "lr": [0.0, -1.0],
                "batch_size": [0],
                "faults": [{5: {0: "drop"}}, {0: {7: "drop"}}, {0: {0: "crash"}}, [1]],
                "round_timeout": [0.0],
                "setup_timeout": [-1.0],
            },
        ),
    ],
    exempt={
        "FLHistory": "a record returned by run_federated, not built by users",
        "FederatedData": "a record of splits; run_federated and pretrained_mlp validate the one "
        "they receive (their data cases pass bad ones)",
        "ClientSetup": "a record the launcher builds from checked arguments (run_methods)",
        "JobConfig": "a record the launcher builds from checked arguments (run_methods)",
        "ServerLog": "a record filled by the ServerApp, not built by users",
        "EncryptedFedAvg": "the Flower strategy run_methods builds from checked arguments",
        "InProcessGrid": "the engine='inprocess' transport run_methods builds",
        "run_methods": "run_federated over several methods; its arguments are the cases above",
        "manifest": "reads a Flower Message made by the apps, not by users",
        "message_bytes": "reads a Flower Message made by the apps, not by users",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
