"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``)."""

import torch

import adtp
from paperkit.testing import BadInputs, Call, fresh

X = adtp.needle_task(6, min_len=12, max_len=16, max_signals=2, seed=0)
IDS, MASK, Y, SIG = X.input_ids, X.attention_mask, X.labels, X.signal_mask
DATA = {"input_ids": "B N", "attention_mask": "B N", "labels": "B"}


def _model():
    torch.manual_seed(0)
    return adtp.PrunableEncoder(200, 8, 3, 2, 16, 16, 2, [1, 2])


def _loader():
    return adtp.make_loader(IDS, MASK, Y, torch.rand(6, 16), batch_size=3)


def _run(ids, mask):
    return _model()(ids, mask, "hard", [0.5, 0.3])


def _quadratic(e):
    s = (e**2).sum((1, 2))
    return torch.stack([s, -s], -1)


E = torch.randn(2, 5, 3)

SUITE = BadInputs(
    adtp,
    [
        Call(
            adtp.needle_task,
            n=4,
            vocab=50,
            min_len=12,
            max_len=20,
            max_signals=3,
            seed=1,
            decoys=True,
            label="majority",
            bad={
                "n": [0, 10**9],
                "vocab": [10],
                "min_len": [4, 30],
                "max_len": [10**6],
                "max_signals": [0, 9],
                "seed": [-1],
            },
        ),
        Call(
            adtp.encoder_flops,
            tokens_per_layer=[16, 8, 4],
            dim=8,
            ffn=16,
            bad={"tokens_per_layer": [[-1, 2]], "dim": [0], "ffn": [0]},
        ),
        Call(
            adtp.integrated_gradients,
            forward_fn=_quadratic,
            embeds=E,
            target=torch.tensor([0, 1]),
            baseline="zeros",
            steps=4,
            method="riemann_right",
            internal_batch=2,
            shapes={"embeds": "B N D", "target": "B"},
            bad={
                "steps": [0, 10**7],
                "internal_batch": [0],
                "baseline": [torch.zeros(2, 5, 4)],
                "forward_fn": [3],
            },
        ),
        Call(
            adtp.integrated_gradients,
            name="integrated_gradients-pad",
            forward_fn=_quadratic,
            embeds=E,
            target=torch.tensor([0, 1]),
            baseline="pad",
            pad_embedding=torch.zeros(3),
            keep_mask=torch.zeros(2, 5, dtype=torch.bool),
            shapes={"embeds": "B N D", "target": "B", "pad_embedding": "D", "keep_mask": "B N"},
        ),
        Call(
            adtp.normalise_importance,
            ig=torch.randn(2, 5),
            mask=torch.ones(2, 5, dtype=torch.bool),
            absolute=False,
            shapes={"ig": "B N", "mask": "B N"},
        ),
        Call(
            adtp.attention_importance,
            attn_maps=[torch.full((2, 2, 4, 4), 0.25)],
            attention_mask=torch.ones(2, 4, dtype=torch.bool),
            shapes={"attention_mask": "B N"},
            bad={
                "attn_maps": [
                    [],
                    torch.ones(2, 2, 4, 4),
                    [torch.ones(2, 2, 4, 5)],
                    [torch.full((2, 2, 4, 4), float("nan"))],
                ]
            },
        ),
        Call(
            adtp.ImportancePredictor,
            dim=8,
            hidden=4,
            call={"hidden": torch.randn(2, 5, 8)},
            shapes={"hidden": "B N 8"},
            bad={"dim": [0], "hidden": [0]},
        ),
        Call(
            adtp.TokenRetainer,
            dim=4,
            num_prune_layers=3,
            hidden=8,
            r_min=0.05,
            init_keep=0.6,
            call={"features": torch.randn(2, 10)},
            shapes={"features": "B 10"},
            bad={"dim": [0], "num_prune_layers": [0], "r_min": [0.0, 1.0], "init_keep": [0.0, 1.0]},
        ),
        Call(
            adtp.PrunableEncoder,
            vocab=200,
            dim=8,
            depth=3,
            heads=2,
            ffn=16,
            max_len=16,
            num_classes=2,
            prune_layers=[1, 2],
            call={
                "input_ids": IDS,
                "attention_mask": MASK,
                "mode": "hard",
                "keep_ratios": [0.5, 0.3],
                "score": "attention",
                "temperature": 1.0,
                "seed": 0,
            },
            shapes={"input_ids": "B N", "attention_mask": "B N"},
            bad={
                "vocab": [0],
                "dim": [0],
                "depth": [1],
                "heads": [0, 3],
                "max_len": [1],
                "num_classes": [1],
                "prune_layers": [[0, 1], [1, 3], [2, 1], []],
                "input_ids": [IDS + 300, IDS[:, :0]],
                "keep_ratios": [[0.0, 0.5], [1.5, 0.5], [0.5]],
                "temperature": [0.0],
                "seed": [-1],
            },
        ),
        Call(
            adtp.ADTPConfig,
            phi=0.3,
            alpha=1.0,
            tau=2.0,
            beta=0.5,
            gamma=0.1,
            eta=2.0,
            tau_a=0.1,
            t_start=1.0,
            t_end=0.05,
            predictor_epochs=1,
            joint_epochs=3,
            lr=1e-3,
            predictor_lr=3e-3,
            seed=0,
            bad={
                "phi": [0.0, 1.5],
                "alpha": [-1.0],
                "tau": [0.0],
                "tau_a": [0.0],
                "t_end": [0.0],
                "lr": [0.0],
                "joint_epochs": [-1],
                "seed": [-1],
            },
        ),
        Call(
            adtp.make_loader,
            input_ids=IDS,
            attention_mask=MASK,
            labels=Y,
            targets=torch.rand(6, 16),
            batch_size=3,
            seed=0,
            shapes={**DATA, "targets": "B N"},
            bad={"batch_size": [0], "seed": [-1], "targets": [torch.rand(6, 2, 15)]},
        ),
        Call(
            adtp.train_teacher,
            model=fresh(_model),
            input_ids=IDS,
            attention_mask=MASK,
            labels=Y,
            epochs=1,
            lr=1e-3,
            batch_size=3,
            seed=0,
            shapes=DATA,
            bad={"model": ["m"], "epochs": [0], "lr": [0.0], "batch_size": [0]},
        ),
        Call(
            adtp.ig_targets,
            teacher=fresh(_model),
            input_ids=IDS,
            attention_mask=MASK,
            labels=Y,
            steps=2,
            method="gausslegendre",
            ig_layer="hidden",
            absolute=True,
            batch_size=4,
            internal_batch=2,
            shapes=DATA,
            bad={"teacher": [None], "steps": [0], "batch_size": [0], "internal_batch": [0]},
        ),
        Call(
            adtp.train_adtp,
            student=fresh(_model),
            teacher=fresh(_model),
            loader=fresh(_loader),
            cfg=adtp.ADTPConfig(joint_epochs=1),
            bad={"student": ["s"], "teacher": [3], "cfg": [{"phi": 0.3}]},
        ),
        Call(
            adtp.FixedRatioPruner,
            score="attention",
            keep_schedule=[0.5, 0.3],
            call={"model": fresh(_model), "input_ids": IDS, "attention_mask": MASK, "seed": 0},
            shapes={"input_ids": "B N", "attention_mask": "B N"},
            bad={"keep_schedule": [[0.0, 0.5], [1.2, 0.5], []], "model": ["m"]},
        ),
        Call(
            adtp.geometric_schedule,
            rho=0.5,
            num_prune_layers=3,
            bad={"rho": [0.0, 1.5], "num_prune_layers": [0]},
        ),
        Call(
            adtp.match_flops,
            model=fresh(_model),
            lengths=MASK.sum(1),
            target_ratio=0.5,
            bad={"model": [None], "target_ratio": [0.0, 2.0], "lengths": [torch.tensor([1, 5])]},
        ),
        Call(
            adtp.evaluate,
            run=_run,
            input_ids=IDS,
            attention_mask=MASK,
            labels=Y,
            batch_size=4,
            shapes=DATA,
            bad={"run": [None], "batch_size": [0]},
        ),
        Call(
            adtp.precision_at_k,
            scores=torch.randn(6, 16),
            signal_mask=SIG,
            attention_mask=MASK,
            shapes={"scores": "B N", "signal_mask": "B N", "attention_mask": "B N"},
            bad={"signal_mask": [torch.zeros(6, 16, dtype=torch.bool)]},
        ),
        Call(
            adtp.paired_bootstrap,
            correct_a=torch.tensor([True, False, True]),
            correct_b=torch.tensor([True, True, False]),
            samples=100,
            seed=0,
            shapes={"correct_a": "B", "correct_b": "B"},
            bad={"samples": [0, 10**9], "seed": [-1]},
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
