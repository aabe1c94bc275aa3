"""Every public entry point of subtrack with one valid call; the shared suite derives the bad
ones. The optimizer's per-group keys and the gradients ``step`` refuses are checked in
test_optimizer.py (their errors name the key and the group, not a constructor argument)."""

import torch
from torch import nn

import subtrack
from paperkit.testing import BadInputs, Call, fresh
from subtrack import (
    SubTrackAdamW,
    grassmann_step,
    make_param_groups,
    optimizer_state_bytes,
    principal_angles,
    projection_error,
    rotate_adam_moments,
    synthetic_corpus,
    tiny_llama,
)
from subtrack.train import train

HUGE = 10**12


def _basis(d, r, seed=0):
    g = torch.Generator().manual_seed(seed)
    # contiguous: the suite writes NaN through reshape(-1), a copy for QR's column-major Q
    return torch.linalg.qr(torch.randn(d, r, generator=g, dtype=torch.float64)).Q.contiguous()


def _randn(*shape, seed=1):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _groups():
    w, b = nn.Parameter(torch.zeros(4, 6)), nn.Parameter(torch.zeros(4))
    return [{"params": [b]}, {"params": [w], "rank": 2}]


def _optimizer():
    opt = SubTrackAdamW(_groups())
    for group in opt.param_groups:
        for p in group["params"]:
            p.grad = torch.ones_like(p)
    opt.step()
    return opt


def _tiny():
    return tiny_llama(29, dim=16, layers=1, heads=2)


PAIR = {"P": _basis(10, 3), "G": _randn(10, 7)}
WIDE = {"P": [_randn(3, 5)]}  # more columns than rows: not a basis

SUITE = BadInputs(
    subtrack,
    [
        Call(
            SubTrackAdamW,
            params=fresh(_groups),
            lr=1e-2,
            betas=(0.9, 0.999),
            eps=1e-6,
            weight_decay=0.0,
            correct_bias=True,
            bad={
                "lr": [-1.0],
                "betas": [(0.9, 1.0), (0.9,), (-0.1, 0.9), "ab"],
                "eps": [-1.0],
                "weight_decay": [-0.1],
            },
        ),
        Call(
            tiny_llama,
            {"family": "llama"},
            vocab=29,
            dim=16,
            layers=1,
            heads=2,
            hidden=32,
            ctx=8,
            bad={
                "vocab": [0, HUGE],
                "dim": [6, 10**7],
                "layers": [0, 10**9],
                "heads": [0],
                "hidden": [0, HUGE],
                "ctx": [0],
                "family": ["gpt2"],
            },
        ),
        Call(
            grassmann_step,
            eta=0.1,
            max_angle=0.3,
            shapes={"P": "d r", "G": "d n"},
            bad={"eta": [-1.0], "max_angle": [-0.1], **WIDE},
            **PAIR,
        ),
        Call(projection_error, shapes={"P": "d r", "G": "d n"}, bad=WIDE, **PAIR),
        Call(
            principal_angles,
            P=_basis(10, 3),
            Q=_basis(10, 2, seed=2),
            shapes={"P": "d r", "Q": "d s"},
            bad={**WIDE, "Q": [_randn(3, 5)]},
        ),
        Call(
            rotate_adam_moments,
            M=_randn(3, 7),
            V=_randn(3, 7, seed=2).abs(),
            C=_basis(3, 3),
            side="left",
            shapes={"M": "r n", "V": "r n", "C": "r r"},
        ),
        Call(
            make_param_groups,
            model=fresh(_tiny),
            rank=4,
            targets=("q_proj", "v_proj"),
            bad={"model": ["x"], "rank": [0], "targets": ["q_proj", (), (1,)]},
        ),
        Call(optimizer_state_bytes, opt=fresh(_optimizer), bad={"opt": ["x", nn.Linear(2, 2)]}),
        Call(synthetic_corpus, n_tokens=100, seed=0, bad={"n_tokens": [0, HUGE], "seed": [-1]}),
        Call(
            train,
            {"method": "SubTrack++"},
            steps=1,
            seed=0,
            train_data=synthetic_corpus(200, seed=0),
            eval_batches=[synthetic_corpus(18, seed=1).view(2, 9)],
            dim=16,
            layers=1,
            rank=2,
            batch=2,
            ctx=8,
            lr=1e-3,
            eval_every=1,
            bad={
                "method": ["SGD"],
                "steps": [0],
                "dim": [0],
                "rank": [0],
                "batch": [0],
                "ctx": [0, 10**6],
                "lr": [-1.0, 0.0],
                "eval_every": [0],
            },
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
