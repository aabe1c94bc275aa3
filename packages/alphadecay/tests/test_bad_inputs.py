"""Every public entry point with one valid call; paperkit's suite derives the bad calls (NaN and
inf, size 0, wrong rank, mismatched shapes, wrong dtype and type, out-of-range values) and
requires a ValueError or TypeError naming the argument before any work starts.

Arguments named like an option of ``Call`` (``fn``, ``method``) go in its positional dict."""

import torch
from torch import nn

import alphadecay as ad
from paperkit.testing import BadInputs, Call, fresh

torch.manual_seed(0)
MODEL = ad.tiny_llama(30, d=32, n_layers=1, n_heads=2, ctx=8)  # 6 tracked Linears at min_eigs 8
TOKENS = torch.randint(0, 30, (2, 8))
W = torch.randn(8, 6)
TRACKING = {"model": MODEL, "min_eigs": 8, "drop_first_last": True, "include": None}
MODULE_BAD = {
    "model": [nn.Linear(4, 4), nn.Sequential(), "model"],
    "min_eigs": [0, 1000],
    "include": ["attn"],
}
ADAM = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.1}
ADAM_BAD = {
    "lr": [-1.0],
    "betas": [(0.9, 1.0), (-0.1, 0.9), (0.9,), 0.9],
    "eps": [-1.0],
    "weight_decay": [-0.1],
}
ALPHADECAY = {
    **TRACKING,
    **ADAM,
    "s1": 2 / 3,
    "s2": 3.0,
    "update_every": 10,
    "fit": "median",
    "xmin_pos": 2.0,
    "bad": {**ADAM_BAD, **MODULE_BAD, "s1": [-1.0], "s2": [0.5], "update_every": [0]},
}
PARAMS = fresh(lambda: [nn.Parameter(torch.randn(3, 2)), nn.Parameter(torch.randn(2))])


def AlphaDecayScheduler(model, **settings):  # noqa: N802 - stands for the class it builds
    """``ad.AlphaDecayScheduler`` on an SGD over ``model``: the optimizer has to hold the
    parameters of the (copied) model of each call; bad optimizers are tested in test_optim.py."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=0.01)
    return ad.AlphaDecayScheduler(model, optimizer, **settings)


SUITE = BadInputs(
    ad,
    [
        Call(
            ad.AWDAdamW,
            params=PARAMS,
            **ADAM,
            ema=0.1,
            bad={**ADAM_BAD, "ema": [1.0, -0.1], "params": [[], torch.randn(3)]},
        ),
        Call(
            ad.AdaDecayAdamW,
            params=PARAMS,
            **ADAM,
            sigmoid_scale=4.0,
            bad={**ADAM_BAD, "sigmoid_scale": [0.0], "params": [[], torch.randn(3)]},
        ),
        Call(ad.AlphaDecayAdamW, {"fn": "linear"}, **ALPHADECAY),
        Call(ad.AlphaDecayAdam, {"fn": "log2"}, **ALPHADECAY),
        Call(
            AlphaDecayScheduler,
            {"fn": "sqrt"},
            **TRACKING,
            base_wd=0.01,
            s1=2 / 3,
            s2=3.0,
            update_every=10,
            fit="ks",
            xmin_pos=2.0,
            bad={
                **MODULE_BAD,
                "model": [nn.Linear(4, 4)],  # the wrapper's SGD needs a model with parameters
                "base_wd": [-0.1],
                "s2": [0.1],
                "update_every": [0],
            },
        ),
        Call(
            ad.tiny_llama,
            {"family": "llama"},
            vocab=30,
            d=32,
            n_layers=1,
            n_heads=2,
            ctx=8,
            hidden=64,
            bad={
                "vocab": [0, 10**12],
                "d": [6, 10**7],
                "n_layers": [0, 10**12],
                "n_heads": [0],
                "ctx": [0],
                "hidden": [10**12],
                "family": ["gpt2"],
            },
        ),
        Call(
            ad.assign_weight_decay,
            {"fn": "linear"},
            alphas={"attn": 2.0, "mlp": 3.0},
            base_wd=0.1,
            s1=2 / 3,
            s2=3.0,
            bad={
                "alphas": [{}, {"a": float("nan")}, {"a": "2"}, [2.0, 3.0]],
                "base_wd": [-0.1],
                "s1": [-1.0],
                "s2": [0.5],
            },
        ),
        Call(ad.esd_eigenvalues, W=W, shapes={"W": "M N"}),
        Call(
            ad.pl_alpha_hill,
            W_or_eigs=W,
            xmin_pos=2.0,
            filter_zeros=False,
            accepts={"W_or_eigs": ["rank"]},  # a 1-D input is read as a list of eigenvalues
            bad={"xmin_pos": [1.0, 0.5]},
        ),
        Call(
            ad.pl_alpha_hill,
            name="pl_alpha_hill_eigs",
            W_or_eigs=[1.0, 2.0, 4.0, 8.0],
            bad={"W_or_eigs": [[5.0, 5.0, 5.0, 5.0], [-1.0, 2.0, 3.0], [1.0], "eigs"]},
        ),
        Call(
            ad.pl_fit,
            W_or_eigs=W,
            xmin_pos=2.0,
            filter_zeros=True,
            accepts={"W_or_eigs": ["rank"]},
            bad={"W_or_eigs": [nn.Linear(4, 3).bias]},
        ),
        Call(
            ad.module_alphas,
            {"method": "ks"},
            **TRACKING,
            xmin_pos=2.0,
            filter_zeros=False,
            bad=MODULE_BAD,
        ),
        Call(ad.module_param_groups, **TRACKING, weight_decay=0.1, bad=MODULE_BAD),
        Call(ad.tracked_modules, **TRACKING, bad=MODULE_BAD),
        Call(
            ad.synthetic_corpus, n_tokens=100, seed=0, bad={"n_tokens": [0, 10**13], "seed": [-1]}
        ),
        Call(ad.synthetic_text, n_chars=100, seed=0, bad={"n_chars": [0, 10**13], "seed": [-1]}),
    ],
    exempt={"PowerLawFit": "the record pl_fit returns, built from checked values"},
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
