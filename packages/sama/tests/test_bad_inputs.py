"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``). Free-text arguments (questions, answers, ids) accept
any string by design. Masks that disagree with the video are refused in test_schema.py and
test_adapter.py."""

import numpy as np
import torch

import sama
from conftest import tiny_record
from paperkit.testing import BadInputs, Call

REC = tiny_record(2)
PATHS = [f"frame_{t}.jpg" for t in range(2)]
M = REC.turns[0].regions[0].masks
M2 = np.zeros((2, 4, 4), bool)
M2[:, 1, 1] = True
FREE = {"choice"}
RESPOND = {
    "frames": PATHS,
    "history": [],
    "question": REC.turns[0].question,
    "regions": REC.turns[0].regions,
}
PATH_REC = sama.VideoRecord("p", PATHS, 4, 4, REC.turns, "MeViS")
G = torch.Generator().manual_seed(0)

SUITE = BadInputs(
    sama,
    [
        Call(sama.Region, masks=M, shapes={"masks": "T H W"}),
        Call(
            sama.Turn,
            question="What is <mask>?",
            answer="A <p>x</p> [SEG].",
            regions=[sama.Region(M)],
            gt_masks=[M],
            question_id="q0",
            accepts={"question": FREE, "answer": FREE, "question_id": {"choice", "type"}},
        ),
        Call(
            sama.VideoRecord,
            video_id="v",
            frames=PATHS,
            height=4,
            width=4,
            turns=REC.turns,
            subset="MeViS",
            bad={"height": [0], "width": [-3]},
            accepts={"video_id": FREE, "subset": FREE},
        ),
        Call(sama.validate, record=REC, bad={"record": [[REC]]}),
        Call(
            sama.chunk_rounds, record=REC, max_rounds=5, filter_turns=True, bad={"max_rounds": [0]}
        ),
        Call(
            sama.sample_frame_indices,
            n=100,
            interval=3,
            max_frames=32,
            min_frames=8,
            bad={"n": [-1, 10**8], "interval": [0], "max_frames": [0], "min_frames": [-1]},
        ),
        Call(sama.to_json, records=[PATH_REC], masks="rle", bad={"records": [[1]]}),
        Call(sama.from_json, text=sama.to_json(PATH_REC), bad={"text": ["[1, 2]", "{}"]}),
        Call(
            sama.make_synthetic_bench,
            n_videos=1,
            n_frames=4,
            size=32,
            max_objects=2,
            max_rounds=2,
            seed=0,
            bad={"n_videos": [0, 10**6], "size": [8], "max_objects": [0, 99], "seed": [-1]},
        ),
        Call(
            sama.ModelResponse,
            text="x",
            masks=[M],
            accepts={"text": FREE},
            bad={"masks": [[M.astype(np.uint8)], M]},
        ),
        Call(
            sama.OracleModel,
            name="OracleModel.respond",
            records=[PATH_REC],
            method="respond",
            call=dict(RESPOND),
            bad={"records": [[1]], "question": ["unknown?"]},
        ),
        Call(
            sama.NullModel,
            name="NullModel.respond",
            text="no",
            method="respond",
            call=dict(RESPOND),
            accepts={"text": FREE, "question": FREE},
            bad={"history": [["q"]], "regions": [[M]]},
        ),
        Call(
            sama.NoisyOracle,
            records=[PATH_REC],
            mask_erosion=1,
            word_drop=0.2,
            seed=0,
            bad={"mask_erosion": [-1], "word_drop": [-0.1, 1.5], "seed": [-1]},
        ),
        Call(sama.erode, mask=M, pixels=1, shapes={"mask": "T H W"}, bad={"pixels": [-1]}),
        Call(
            sama.evaluate,
            model=sama.NullModel(),
            records=[REC],
            track="G",
            text_sim="jaccard",
            clair=None,
            history="gt",
            max_rounds=5,
            penalize_unpaired=False,
            strict=False,
            official_quirks=False,
            java=False,
            bad={"model": [object()], "records": [[], [1]], "max_rounds": [0], "clair": [3]},
        ),
        Call(
            sama.caption_scores,
            refs=["a red circle"],
            hyps=["a red square"],
            java=False,
            drop_empty=True,
            bad={"refs": ["a red circle", [1]], "hyps": [["a", "b"]]},
        ),
        Call(
            sama.CaptionScorer,
            name="CaptionScorer.score",
            java=False,
            method="score",
            call={"refs": ["a b"], "hyps": ["a c"], "drop_empty": True},
            bad={"hyps": [[]]},
        ),
        Call(sama.python_tokenize, text="A b.", accepts={"text": FREE}),
        Call(sama.clean_text, text="<p>a</p> [SEG]", accepts={"text": FREE}),
        Call(sama.extract_phrases, text="<p>a</p> [SEG]", accepts={"text": FREE}),
        Call(sama.jaccard_similarity, a="red circle", b="circle", accepts={"a": FREE, "b": FREE}),
        Call(sama.mask_iou, a=M, b=M2, shapes={"a": "T H W", "b": "T H W"}),
        Call(
            sama.iou_matrix,
            preds=[M, M2],
            gts=[M2],
            method="packed",
            bad={
                "preds": [[M.astype(float)], [np.zeros((2, 4, 5), bool), M]],
                "gts": [[np.zeros((2, 4, 5), bool)], [M[0]]],
            },
        ),
        Call(sama.greedy_pairs, iou=np.array([[0.5, 0.2], [0.1, 0.7]]), accepts={"iou": {"empty"}}),
        Call(
            sama.greedy_miou, preds=[M], gts=[M2], penalize_unpaired=False, bad={"preds": [[M[0]]]}
        ),
        Call(
            sama.greedy_matches,
            pred_masks=[M],
            pred_phrases=["x"],
            gt_masks=[M2],
            gt_phrases=["x"],
            text_sim="jaccard",
            iou_threshold=0.5,
            sim_threshold=0.5,
            official_quirks=False,
            bad={
                "iou_threshold": [0.0, 1.5],
                "sim_threshold": [-1.0],
                "pred_phrases": ["x"],
                "text_sim": ["bert"],
            },
        ),
        Call(
            sama.greedy_recall,
            pred_masks=[[M]],
            pred_phrases=[["x"]],
            gt_masks=[[M2]],
            gt_phrases=[["x"]],
            text_sim="jaccard",
            iou_threshold=0.5,
            sim_threshold=0.5,
            strict=False,
            official_quirks=False,
            bad={"gt_phrases": [[["x"], ["y"]]], "iou_threshold": [0.0]},
        ),
        Call(
            sama.SpatioTemporalContextAggregator,
            d_vis=6,
            d_model=16,
            n_spatial=4,
            n_temporal=3,
            n_layers=1,
            n_heads=2,
            call={
                "frame_feats": torch.randn(2, 3, 4, 6, generator=G),
                "text": torch.randn(2, 5, 16, generator=G),
                "regions": torch.rand(2, 2, 3, 2, 2, generator=G) < 0.5,
            },
            shapes={"frame_feats": "B T N 6", "text": "B L 16", "regions": "B R T h w"},
            bad={
                "d_vis": [0],
                "d_model": [1],
                "n_heads": [3],
                "n_layers": [0],
                "regions": [torch.zeros(2, 2, 3, 3, 3, dtype=torch.bool)],
            },
        ),
    ],
    exempt={
        "MiniLMSimilarity": "takes no argument; needs optional weights (test_textsim.py)",
        "Report": "a result record that evaluate builds",
        "VideoChatModel": "a typing.Protocol, not called",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
