"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range and resource-sized values listed in ``bad``)."""

import functools

import torch

import promptmem
from paperkit.testing import BadInputs, Call
from promptmem import FrozenTransformer, PromptInterpreter, memorization_dataset, tune_prompt

X, Y = memorization_dataset(6, 2, vocab=4, seed=0)
XR, YR = memorization_dataset(5, 2, vocab=4, kind="lowrank", rank=2, d0=3, seed=0)
PROMPT = PromptInterpreter().build(X, Y, 3)
MODEL = FrozenTransformer(4, d=16, layers=1, heads=2, max_len=8)
TINY_TUNER = functools.partial(tune_prompt, steps=2)


def _factory():
    return FrozenTransformer(4, d=16, layers=1, heads=2, max_len=8)


SUITE = BadInputs(
    promptmem,
    [
        Call(
            memorization_dataset,
            n=4,
            N=2,
            vocab=8,
            kind="tokens",
            seed=0,
            input_vocab=8,
            bad={"n": [0, 10**9, 65], "N": [0], "vocab": [1], "seed": [-1], "input_vocab": [1]},
        ),
        Call(
            memorization_dataset,
            name="memorization_dataset-lowrank",
            n=4,
            N=2,
            vocab=8,
            kind="lowrank",
            rank=2,
            d0=4,
            bad={"rank": [0, 5], "d0": [0], "n": [10**8]},
        ),
        Call(
            PromptInterpreter,
            mode="exact",
            width=4,
            method="build",
            call={"X": X, "Y": Y, "k": 2},
            shapes={"X": "n N", "Y": "n N"},
            bad={"width": [0], "k": [0, -3]},
        ),
        Call(
            PromptInterpreter,
            name="PromptInterpreter.build-real",
            method="build",
            call={"X": XR, "Y": YR, "k": 1},
            shapes={"X": "n N d", "Y": "n N"},
        ),
        Call(
            PromptInterpreter,
            name="PromptInterpreter.run",
            method="run",
            call={"prompt": PROMPT, "x": X[0]},
            bad={"x": [[1, 2, 3], [9, 0], "ab"]},
        ),
        Call(
            promptmem.tradeoff_curve,
            n=16,
            N=4,
            ks=[1, 8],
            vocab=8,
            bad={"n": [0, 10**13], "N": [0], "ks": [[0], [1, -2]], "vocab": [1]},
        ),
        Call(
            FrozenTransformer,
            vocab=4,
            d=16,
            layers=1,
            heads=2,
            max_len=8,
            init_std=0.1,
            seed=0,
            call={"prompt": torch.randn(2, 16), "x": torch.randint(0, 4, (3, 4))},
            shapes={"prompt": "m 16", "x": "B N"},
            # m = 0 (an empty prompt) is a documented valid input: the model runs without one
            accepts={"prompt": {"empty"}},
            bad={
                "vocab": [1, 10**7],
                "d": [0],
                "heads": [0, 3],
                "max_len": [0],
                "init_std": [0.0, -1.0],
                "layers": [0],
                "seed": [-1],
                "prompt": [torch.randn(7, 16)],  # m + N > max_len
            },
        ),
        Call(
            tune_prompt,
            model=MODEL,
            X=X,
            Y=Y,
            m=2,
            steps=2,
            lr=0.01,
            seed=0,
            shapes={"X": "n N", "Y": "n N"},
            bad={
                "m": [-1, 7, 10**6],
                "steps": [-1, 10**9],
                "lr": [0.0, -1.0],
                "seed": [-1],
                "X": [X + 4],
                "Y": [Y + 4],
            },
        ),
        Call(
            promptmem.min_prompt_length,
            model_factory=_factory,
            X=X,
            Y=Y,
            m_max=2,
            seeds=1,
            rel_resolution=0.25,
            tuner=TINY_TUNER,
            shapes={"X": "n N", "Y": "n N"},
            bad={
                "m_max": [0, 10**6],
                "seeds": [0],
                "rel_resolution": [-0.1, 1.0],
                "model_factory": [3],
                "tuner": ["x"],
            },
        ),
        Call(
            promptmem.fit_scaling,
            ns=[4, 8, 16],
            Ns=[1, 1, 1],
            ms=[1.0, 2.0, 3.0],
            level=0.95,
            bad={"ns": [[0, 8, 16], [4, 4, 4]], "ms": [[-1.0, 2.0, 3.0]], "level": [0.0, 1.0]},
        ),
    ],
    exempt={
        "PrecisionError": "an exception class raised by PromptInterpreter.build",
        "Prompt": "the frozen record PromptInterpreter.build returns; it computes nothing",
        "PromptToken": "one token of a Prompt, a frozen record; it computes nothing",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
