"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, dtypes, types, out-of-range values).
The Common-O specific ones: duplicate candidates, a missing NONE option, not exactly two images,
GT objects not among the candidates (the ``bad`` values of ``Example``)."""

import tempfile
from pathlib import Path

import numpy as np
import torch

import commono
from commono import NONE_OPTION, Example, build_prompt, save_jsonl
from paperkit.testing import BadInputs, Call

IMG = np.zeros((64, 64, 3), np.uint8)
CANDS = ["red star", NONE_OPTION, "blue circle"]
SCENES = (["red star", "green cross"], ["red star", "blue circle"])
EX = Example(
    id="x", images=(IMG, IMG), candidates=CANDS, gt_common=["red star"], scene_objects=SCENES
)
EXS = [EX]
PROMPT = build_prompt(EX)
RECS = commono.evaluate(commono.OracleAdapter(EXS), EXS).records
JSONL = Path(tempfile.mkdtemp(prefix="commono-bad-inputs-")) / "x.jsonl"


class Stub:
    def detect(self, image, candidates=None):
        return {"red star"}


def _jsonl():
    if not JSONL.is_file():
        save_jsonl(EXS, JSONL, JSONL.parent / "img")
    return JSONL


def _adapter(cls, **kwargs):
    return Call(
        cls,
        name=f"{cls.__name__}.__call__",
        call={"images": [IMG, IMG], "prompt": PROMPT},
        bad={"images": [[IMG, IMG, IMG], [np.zeros((4, 4), np.uint8)]]},
        **kwargs,
    )


SUITE = BadInputs(
    commono,
    [
        Call(
            Example,
            id="x",
            images=(IMG, IMG),
            candidates=CANDS,
            gt_common=["red star"],
            split="common-o",
            source="synthetic",
            scene_objects=SCENES,
            similar_distractor=False,
            bad={
                "candidates": [["red star", "red star", NONE_OPTION], ["red star", "blue circle"]],
                "images": [(IMG,), (IMG, IMG, IMG), (IMG, np.zeros((64, 64), np.uint8))],
                "gt_common": [["green cross"], [NONE_OPTION]],
            },
            accepts={"id": {"choice"}},  # any non-empty string is an id
        ),
        Call(commono.validate, example=EX, bad={"example": ["x", 3]}),
        Call(
            commono.build_prompt, example=EX, task="common", image_index=None, bad={"example": [3]}
        ),
        Call(
            commono.build_prompt,
            name="build_prompt-perception",
            example=EX,
            task="perception",
            image_index=1,
            bad={"image_index": [2, -1]},
        ),
        Call(commono.letters, n=3, bad={"n": [0, 27]}),
        Call(commono.parse_options, prompt=PROMPT, bad={"prompt": ["no options here"]}),
        Call(
            commono.parse_answer,
            text="Answer: A",
            n_options=3,
            bad={"n_options": [0, 27]},
            accepts={"text": {"choice"}},
        ),
        Call(
            commono.score_example,
            pred_letters={"A"},
            example=EX,
            task="common",
            image_index=None,
            bad={"pred_letters": [{"Z"}, "A", 3], "example": [3]},
        ),
        Call(commono.summarize, records=RECS, bad={"records": [[], 3]}),
        Call(
            commono.evaluate,
            adapter=commono.OracleAdapter(EXS),
            examples=EXS,
            task="common",
            bad={"adapter": [3], "examples": [[], EX]},
        ),
        Call(commono.Report, task="common", records=RECS, bad={"records": [3]}),
        Call(
            commono.Report,
            name="Report.breakdown",
            task="common",
            records=RECS,
            method="breakdown",
            call={"by": "split"},
        ),
        Call(commono.OracleAdapter, examples=EXS, bad={"examples": [[], EX]}),
        _adapter(commono.OracleAdapter, examples=EXS),
        Call(commono.RandomAdapter, seed=0, p=0.5, bad={"seed": [-1], "p": [1.5, -0.1]}),
        _adapter(commono.RandomAdapter, seed=0),
        Call(commono.UnionAdapter, detector=Stub(), bad={"detector": [3]}),
        _adapter(commono.UnionAdapter, detector=Stub()),
        Call(commono.PerceptionIntersectAdapter, detector=Stub(), bad={"detector": [3]}),
        _adapter(commono.PerceptionIntersectAdapter, detector=Stub()),
        Call(commono.CallableAdapter, fn=lambda images, prompt: "Answer: A", bad={"fn": [3]}),
        _adapter(commono.CallableAdapter, fn=lambda images, prompt: "Answer: A"),
        Call(commono.format_answer, letters=["A", "C"], bad={"letters": [["AB"], "A", 3]}),
        Call(
            commono.make_synthetic_bench,
            n=2,
            split="complex",
            seed=0,
            similar_prob=0.5,
            image_size=64,
            bad={"n": [0, 10**6], "seed": [-1], "similar_prob": [1.5], "image_size": [8, 10**5]},
        ),
        Call(
            commono.make_single_scenes,
            n=2,
            seed=0,
            image_size=64,
            objects=(3, 5),
            stride=8,
            bad={
                "n": [0, 10**6],
                "image_size": [8],
                "objects": [(0, 3), (5, 3), (3, 20)],
                "stride": [3, 0],
            },
        ),
        Call(
            commono.is_similar,
            a="red star",
            b="blue star",
            accepts={"a": {"choice"}, "b": {"choice"}},
        ),
        Call(
            commono.render_scene,
            names=["red star", "blue circle"],
            rng=np.random.default_rng(0),
            size=64,
            max_tries=60,
            bad={
                "names": [[], ["red star", "red star"], ["unicorn"]],
                "rng": [3],
                "size": [8],
                "max_tries": [0],
            },
        ),
        Call(
            commono.TinyDetector,
            width=8,
            threshold=0.5,
            bad={"width": [0], "threshold": [0.0, 1.0]},
        ),
        Call(
            commono.TinyDetector,
            name="TinyDetector.forward",
            width=8,
            call={"x": torch.rand(2, 3, 64, 64)},
            shapes={"x": "B 3 H W"},
            bad={"x": [torch.rand(2, 3, 60, 60)]},
        ),
        Call(
            commono.TinyDetector,
            name="TinyDetector.predict_proba",
            width=8,
            method="predict_proba",
            call={"images": [IMG]},
            bad={"images": [[], [np.zeros((64, 64, 3), np.float32)]]},
        ),
        Call(
            commono.train_detector,
            n_scenes=8,
            seconds=1.0,
            epochs=1,
            batch_size=4,
            lr=1e-3,
            width=4,
            image_size=64,
            seed=0,
            bad={
                "n_scenes": [0, 10**6],
                "seconds": [0.0],
                "epochs": [0],
                "batch_size": [0],
                "lr": [0.0],
                "width": [0],
                "image_size": [8],
                "seed": [-1],
            },
        ),
        Call(
            commono.save_jsonl,
            examples=EXS,
            path=JSONL.parent / "y.jsonl",
            image_dir=JSONL.parent / "img2",
            bad={"examples": [3, [3]]},
        ),
        Call(
            commono.load_jsonl,
            path=_jsonl(),
            load_images=True,
            limit=5,
            bad={"path": [Path("missing.jsonl")], "limit": [0]},
        ),
    ],
    exempt={"Adapter": "a typing.Protocol describing the call; nothing to construct"},
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
