"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range and resource-sized values listed in ``bad``)."""

import torch

import cbsa
from paperkit.testing import BadInputs, Call


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


B, H, N, m, p, D = 2, 2, 9, 3, 4, 8
w, reps0 = _rand(B, H, N, p, seed=1), _rand(B, H, m, p, seed=2)
x = _rand(B, 1 + 16, D, seed=3)
img = _rand(2, 1, 16, 16, seed=4)
Z = _rand(20, 6, seed=5).double()
U = torch.linalg.qr(_rand(6, 6, seed=6).double())[0]
BIG = 10**7
LAYER = {"dim": D, "heads": H, "dim_head": p}
LAYER_BAD = {"dim": [0, BIG], "heads": [0, BIG], "dim_head": [0, BIG]}

SUITE = BadInputs(
    cbsa,
    [
        Call(
            cbsa.contract_broadcast,
            w=w,
            reps0=reps0,
            step_rep=_rand(H, seed=7),
            step_x=_rand(H, seed=8),
            scale=0.5,
            assignment=torch.softmax(_rand(B, H, m, N, seed=9), -1),
            shapes={
                "w": "B H N p",
                "reps0": "B H m p",
                "step_rep": "H",
                "step_x": "H",
                "assignment": "B H m N",
            },
            bad={"scale": [0.0, -1.0]},
        ),
        Call(
            cbsa.CBSA,
            **LAYER,
            num_reps=4,
            rep_init="pool2d",
            has_cls=True,
            call={"x": x, "return_attn": False},
            shapes={"x": f"B N {D}"},
            bad={**LAYER_BAD, "num_reps": [0, 5, BIG], "has_cls": [1]},
        ),
        Call(
            cbsa.CBSA,
            name="CBSA-grid",
            **LAYER,
            num_reps=4,
            grid=(4, 4),
            call={"x": x},
            shapes={"x": f"B N {D}"},
            bad={"grid": [(0, 4), (4,), "4x4"]},
        ),
        Call(cbsa.MSSA, **LAYER, call={"x": x}, shapes={"x": f"B N {D}"}, bad=LAYER_BAD),
        Call(cbsa.TSSA, **LAYER, call={"x": x}, shapes={"x": f"B N {D}"}, bad=LAYER_BAD),
        Call(
            cbsa.SoftmaxAttention, **LAYER, call={"x": x}, shapes={"x": f"B N {D}"}, bad=LAYER_BAD
        ),
        Call(
            cbsa.ISTA,
            dim=D,
            eta=0.1,
            lambd=0.1,
            call={"x": x},
            shapes={"x": f"B N {D}"},
            bad={"dim": [0, BIG], "eta": [-1.0], "lambd": [-0.5]},
            # any number of leading axes: the step acts on the last one
            accepts={"x": {"rank"}},
        ),
        Call(
            cbsa.CBT,
            image_size=16,
            patch_size=4,
            in_chans=1,
            num_classes=10,
            dim=16,
            depth=2,
            heads=2,
            num_reps=4,
            attn="cbsa",
            ffn="ista",
            pool="cls",
            call={"img": img},
            shapes={"img": "B 1 16 16"},
            bad={
                "image_size": [0, 1, 10**6],
                "patch_size": [0, 3, 32],
                "depth": [0, 10**4],
                "num_classes": [0],
                "num_reps": [0, 5],
                "dim": [0, 10**6],
            },
        ),
        Call(
            cbsa.coding_rate,
            X=Z,
            eps=0.5,
            bad={"eps": [0.0, -1.0]},
            # any number of leading (batch) axes
            accepts={"X": {"rank"}},
        ),
        Call(
            cbsa.subspace_compression,
            Z=Z,
            U_list=[U[:, :2], U[:, 2:4]],
            eps=0.5,
            shapes={"Z": "n D"},
            bad={"eps": [0.0], "U_list": [[], [U[:3, :2]], [Z]]},
            accepts={"Z": {"rank"}},
        ),
        Call(cbsa.principal_angles, A=U[:, :2], B=U[:, 2:5], shapes={"A": "D a", "B": "D b"}),
        Call(
            cbsa.union_of_subspaces,
            n=40,
            D=8,
            K=2,
            p=3,
            noise=0.05,
            seed=0,
            bad={
                "n": [0, 10**12],
                "D": [0],
                "K": [0, 9],
                "p": [0, 5],
                "noise": [-0.1],
                "seed": [-1],
            },
        ),
        Call(cbsa.digits_images, upsample=16, bad={"upsample": [0, 7, 10**4]}),
        Call(
            cbsa.attention_flops,
            kind="cbsa",
            N=17,
            dim=64,
            heads=4,
            dim_head=16,
            num_reps=4,
            bad={"N": [0], "dim": [0], "heads": [0], "dim_head": [0], "num_reps": [0]},
        ),
        Call(cbsa.count_flops, model=cbsa.MSSA(D, H, p), x=x, bad={"model": ["not a module"]}),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
