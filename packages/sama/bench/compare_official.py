"""Agreement of sama's scoring with the official SAMA-Bench evaluation code, on the same inputs.

Usage (a checkout of github.com/sunye23/SAMA, any commit with the SAMA-Bench scripts):

    OMP_NUM_THREADS=1 uv run python packages/sama/bench/compare_official.py PATH/TO/SAMA [--java]

The official functions are read from that checkout at run time (``ast`` picks them out by name, so
their heavy imports -- mmengine, xtuner, a BERT download -- are not executed) and called on random
toy inputs next to ours: frame sampling, text cleaning, greedy mIoU, greedy recall (BERT replaced
by the same Jaccard similarity on both sides, with ``official_quirks=True`` and without), the
loader's chunking and filtering, and (``--java``) the COCO caption metrics through COCOEvalCap
with SPICE stubbed (its Stanford models cannot be downloaded).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import tempfile
import time
from pathlib import Path

import numpy as np

import sama

METRICS = "projects/llava_sam2/evaluation/eval_gcg_metrics_demo.py"
LOADER = "projects/llava_sam2/evaluation/video_gcg_eval_video_wise.py"


def extract(path: Path, names: set[str], env: dict) -> dict:
    """Execute only the top-level functions ``names`` of ``path`` in a namespace ``env``."""
    tree = ast.parse(path.read_text())
    g = dict(env)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            exec(compile(ast.Module([node], []), str(path), "exec"), g)
    return g


def _method(path: Path, name: str, env: dict):
    tree = ast.parse(path.read_text())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)
    g = dict(env)
    exec(compile(ast.Module([fn], []), str(path), "exec"), g)
    return g[name]


def _quiet(*a, **k):
    return None


def compare_sampling_and_text(loader: dict) -> None:
    bad = [
        n
        for n in range(400)
        if loader["get_sparse_indices_uniform"](n) != sama.sample_frame_indices(n)
    ]
    print(f"frame sampling, n = 0..399: {len(bad)} mismatches")
    texts = [
        "The <p> Red Circle </p> [SEG]  is  moving <p>x</p>[SEG][SEG] left.<|im_end|>",
        "no tags at all",
        " <p>a\nb</p> [SEG]\n\n end <s>",
        "<p></p>[SEG]",
        "nested <p>a <p>b</p> c</p> [SEG]",
    ]
    same = sum(
        loader["remove_special_tokens"](t) == sama.clean_text(t)
        and loader["extract_groundings"](t) == sama.extract_phrases(t)
        for t in texts
    )
    print(f"clean_text / extract_phrases: {same} of {len(texts)} strings identical")


def compare_masks(metrics: dict, n_videos: int = 300, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    words = ["red circle", "blue square", "the red circle", "green diamond", "circle", "red"]

    def masks(n, shape, base=None):
        out = []
        for k in range(n):
            if base is not None and k < len(base) and rng.random() < 0.7:
                flip = (rng.random(shape) < rng.uniform(0, 0.4)) & (rng.random(shape) < 0.5)
                out.append(base[k] ^ flip)
            else:
                out.append(rng.random(shape) < rng.uniform(0.05, 0.6))
        return out

    d_miou = d_on = d_off = 0.0
    turns = differing = 0
    t_off = t_ours = 0.0
    for _ in range(n_videos):
        P, G, PL, GL = [], [], [], []
        for _ in range(int(rng.integers(1, 6))):
            shape = (int(rng.integers(1, 4)), 6, 6)
            g = masks(int(rng.integers(0, 5)), shape)
            p = masks(int(rng.integers(0, 5)), shape, base=g)
            gl = [words[i] for i in rng.integers(0, len(words), len(g))]
            pl = (
                [words[i] for i in rng.integers(0, len(words), len(p))]
                if rng.random() < 0.9
                else []
            )
            if rng.random() < 0.2 and pl:  # one phrase fewer than masks
                pl = pl[:-1]
            P.append(p), G.append(g), PL.append(pl), GL.append(gl)
            turns += 1
        op, og = [dict(enumerate(p)) for p in P], [dict(enumerate(g)) for g in G]
        t = time.process_time()
        off_m = metrics["evaluate_mask_miou"](op, og)
        off_r = metrics["evaluate_recall_with_mapping"](og, GL, op, PL)
        t_off += time.process_time() - t
        t = time.process_time()
        m = float(np.mean([sama.greedy_miou(p, g) for p, g in zip(P, G, strict=True)]))
        r_on = sama.greedy_recall(P, PL, G, GL, text_sim="jaccard", official_quirks=True)
        t_ours += time.process_time() - t
        r_off = sama.greedy_recall(P, PL, G, GL, text_sim="jaccard")
        d_miou, d_on = max(d_miou, abs(off_m - m)), max(d_on, abs(off_r - r_on))
        d_off = max(d_off, abs(off_r - r_off))
        for p, g, pl, gl in zip(P, G, PL, GL, strict=True):
            if len(p) and len(pl):
                a = [tuple(int(x) for x in ij) for ij in metrics["find_best_matches"](g, gl, p, pl)]
                differing += a != sama.greedy_matches(
                    p, pl, g, gl, text_sim="jaccard", official_quirks=True
                )
    print(
        f"{n_videos} videos, {turns} turns: max |d mIoU| {d_miou:.1e}; max |d recall| "
        f"{d_on:.1e} (official_quirks=True), {d_off:.3f} (False); differing match lists "
        f"{differing}; CPU s official {t_off:.3f}, ours {t_ours:.3f}"
    )


def compare_loader(path: Path, n_videos: int = 200, seed: int = 1) -> None:
    log: list = []
    fn = _method(
        path,
        "json_file_preprocess",
        {"json": json, "os": os, "print": lambda *a, **k: log.append(a), "tqdm": lambda x, **k: x},
    )
    rng = np.random.default_rng(seed)
    m = np.zeros((2, 4, 4), bool)
    m[:, 1, 1] = True
    data, ours = [], []
    for v in range(n_videos):
        conv, om, gt, turns = [], [], [], []
        for k in range(int(rng.integers(1, 13))):
            nm, nr, ns, ng, ne = (int(x) for x in rng.integers(0, [3, 3, 3, 3, 2]))
            q, a = "Q" + " <mask>" * nm, "A" + " <p>x</p> [SEG]" * ns
            conv += [
                {"from": "human", "value": q, "question_id": f"{v}_{k}"},
                {"from": "gpt", "value": a},
            ]
            om.append(list(range(nr)))
            gt.append([[1]] * ng + [[]] * ne)
            turns.append(sama.Turn(q, a, [sama.Region(m)] * nr, [m] * ng + [None] * ne, f"{v}_{k}"))
        if rng.random() < 0.3:
            conv.append({"from": "human", "value": "odd trailing", "question_id": "x"})
        data.append(
            {
                "video": f"vid{v}",
                "conversation": conv,
                "obj_masks": om,
                "groundtruth": gt,
                "frames": ["0", "1"],
            }
        )
        ours.append(sama.VideoRecord(f"vid{v}", ["0", "1"], 4, 4, turns))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(data, f)

    class Loader:
        qa_per_item = 5

    off = fn(Loader(), f.name)
    os.remove(f.name)
    mine = [c for r in ours for c in sama.chunk_rounds(r, 5)]
    same = len(off) == len(mine) and all(
        [t["value"] for t in o["conversations"][0::2]] == [t.question for t in c.turns]
        for o, c in zip(off, mine, strict=True)
    )
    official_filtered = next(x for x in log if "filtered" in str(x))[3]
    print(
        f"loader: records official {len(off)}, ours {len(mine)}, identical questions "
        f"(suffix included): {same}; filtered official {official_filtered}, ours "
        f"{sum(len(sama.validate(r)) for r in ours)}"
    )


def compare_captions(path: Path) -> None:
    import pycocoevalcap.eval as coco_eval

    class NoSpice:
        def compute_score(self, gts, res):
            return 0.0, []

        def method(self):
            return "SPICE"

    coco_eval.Spice = NoSpice
    fn = extract(path, {"eval_caption_quality"}, {"print": _quiet})["eval_caption_quality"]
    recs = sama.make_synthetic_bench(n_videos=8, seed=3)
    model = sama.NoisyOracle(recs, 1, 0.3)
    videos = [
        (
            [sama.clean_text(t.answer) for t in r.turns],
            [
                sama.clean_text(model.respond(r.frames, [], t.question, t.regions).text)
                for t in r.turns
            ],
        )
        for r in recs
    ]
    videos.append(
        (
            ["A man's dog (brown) doesn't run -- fast, really... ok.", "Two cats; one sleeps!"],
            ["The man's dog doesn't run fast.", "two cats, one sleeping"],
        )
    )
    java, py = sama.CaptionScorer(java=True), sama.CaptionScorer(java=False)
    d_java = d_py = 0.0
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # COCOEvalCap's script writes its json files to the working directory
        try:
            for refs, hyps in videos:
                off = fn(refs, hyps)
                a, b = java.score(refs, hyps), py.score(refs, hyps)
                for k in ("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr"):
                    d_java = max(d_java, abs(off[k] - a[k]))
                    if b[k] is not None:
                        d_py = max(d_py, abs(off[k] - b[k]))
        finally:
            os.chdir(cwd)
    sents = [s for refs, hyps in videos for s in refs + hyps]
    same = sum(
        t == sama.python_tokenize(s) for t, s in zip(java.tokenize(sents), sents, strict=True)
    )
    java.close()
    print(
        f"captions, {len(videos)} videos: max |diff| vs COCOEvalCap {d_java:.1e} (PTB + Java), "
        f"{d_py:.1e} (Python tokenizer; METEOR not compared); Python tokenizer = PTB on "
        f"{same} of {len(sents)} sentences"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("official", type=Path, help="root of a sunye23/SAMA checkout")
    parser.add_argument("--java", action="store_true", help="also compare caption metrics")
    args = parser.parse_args()
    metrics = extract(
        args.official / METRICS,
        {
            "compute_iou",
            "compute_miou",
            "evaluate_mask_miou",
            "compute_iou_matrix",
            "find_best_matches",
            "evaluate_recall_with_mapping",
        },
        {
            "np": np,
            "tqdm": lambda x, **k: x,
            "print": _quiet,
            "text_similarity_bert": sama.jaccard_similarity,
        },
    )
    loader = extract(
        args.official / LOADER,
        {"get_sparse_indices_uniform", "extract_groundings", "remove_special_tokens"},
        {"re": re},
    )
    compare_sampling_and_text(loader)
    compare_masks(metrics)
    compare_loader(args.official / LOADER)
    if args.java:
        compare_captions(args.official / METRICS)


if __name__ == "__main__":
    main()
