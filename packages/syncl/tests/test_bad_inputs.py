"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``), among them the paper-level ones: tau <= 0, k < 1,
identity / embedding length mismatches and a negative distance threshold."""

import numpy as np
import torch

import syncl
from paperkit.testing import BadInputs, Call

torch.manual_seed(0)
X, GT = syncl.make_bev_sequences(3, n_frames=3, grid=16, seed=0)
SEQS = [[[{"id": 0, "center": np.array([1.0, 2.0])}], []], [[{"id": 1, "center": np.zeros(2)}]]]
PRED = [
    [[{"id": 5, "center": np.array([1.5, 2.0]), "score": 0.9}], []],
    [[{"id": 2, "center": np.ones(2), "score": 0.5}]],
]
g = torch.Generator().manual_seed(0)
Q, N_T = 6, 2
OUT = {"logits": torch.randn(1, Q, 1, generator=g), "boxes": torch.rand(1, Q, 6, generator=g)}
TARGETS = [
    {
        "labels": torch.zeros(2, dtype=torch.long),
        "boxes": torch.rand(2, 6, generator=g),
        "ids": torch.tensor([4, 7]),
    }
]
TINY = {"grid": 16, "d_model": 16, "n_obj_queries": 4}
COSTS = np.r_[np.linspace(0.1, 0.12, 12), np.linspace(0.9, 0.92, 12)]
GROUPS = np.tile(np.arange(6), 4)

SUITE = BadInputs(
    syncl,
    [
        Call(
            syncl.make_bev_sequences,
            n_seq=2,
            n_frames=3,
            grid=16,
            cell=1.0,
            max_objects=4,
            birth=0.1,
            death=0.05,
            occlusion=0.1,
            clutter=0.05,
            seed=0,
            bad={
                "n_seq": [0, 10**9],
                "n_frames": [0],
                "grid": [4],
                "cell": [0.0],
                "max_objects": [0],
                "birth": [1.5],
                "death": [-0.1],
                "occlusion": [2.0],
                "clutter": [-1.0],
                "seed": [-1],
            },
        ),
        Call(
            syncl.SharedDecoder,
            n_layers=2,
            d_model=16,
            n_heads=2,
            ff=32,
            call={
                "queries": torch.randn(2, 5, 16),
                "memory": torch.randn(2, 7, 16),
                "query_pos": torch.randn(2, 5, 16),
                "self_attn": False,
            },
            shapes={"queries": "B Q d", "memory": "B N d", "query_pos": "B Q d"},
            bad={"n_layers": [0], "d_model": [0], "n_heads": [3], "ff": [0]},
        ),
        Call(
            syncl.matching_cost,
            logits=torch.randn(5, 1),
            boxes=torch.rand(5, 6),
            gt_labels=torch.tensor([0, 0, 0]),
            gt_boxes=torch.rand(3, 6),
            w_cls=2.0,
            w_l1=0.25,
            shapes={"logits": "Q C", "boxes": "Q D", "gt_labels": "G", "gt_boxes": "G D"},
            bad={"gt_labels": [torch.tensor([0, 1, 0])], "w_cls": [-1.0], "w_l1": [-0.5]},
        ),
        Call(
            syncl.hungarian_one_to_one,
            cost=np.random.default_rng(0).random((5, 3)),
            accepts={"cost": {"empty"}},  # no queries: the empty assignment (documented)
        ),
        Call(
            syncl.topk_one_to_many,
            cost=np.random.default_rng(0).random((8, 3)),
            k=2,
            bad={"k": [0, -1]},
            accepts={"cost": {"empty"}},
        ),
        Call(
            syncl.DynamicQueryFilter,
            n_iter=10,
            min_keep=1,
            min_pool=20,
            bic_margin=10.0,
            method="select",
            call={"costs": COSTS, "group": GROUPS},
            shapes={"costs": "n", "group": "n"},
            bad={"n_iter": [0], "min_keep": [0], "min_pool": [1], "bic_margin": [-1.0]},
        ),
        Call(
            syncl.hybrid_match,
            out_S=OUT,
            out_C=OUT,
            targets=TARGETS,
            track_ids=torch.tensor([[7, -1]]),
            k=4,
            use_filter=True,
            bad={
                "k": [0],
                "targets": [TARGETS * 2],
                "track_ids": [torch.tensor([[-2, 7]])],
                "out_S": [{"logits": OUT["logits"]}],
                "out_C": [{"logits": OUT["boxes"]}],
            },
            accepts={"track_ids": {"negative"}},  # -1 marks an empty track slot (documented)
        ),
        Call(
            syncl.instance_contrastive_loss,
            track_emb=torch.randn(3, 8),
            track_ids=torch.tensor([0, 1, 2]),
            obj_emb=torch.randn(4, 8),
            obj_ids=torch.tensor([0, 0, 1, 3]),
            tau=0.1,
            kernel="cosine",
            shapes={"track_emb": "T d", "track_ids": "T", "obj_emb": "P d", "obj_ids": "P"},
            bad={
                "tau": [0.0, -0.1],
                "track_ids": [torch.tensor([0, 1])],
                "obj_ids": [torch.tensor([0, 1, 2])],
            },
        ),
        Call(
            syncl.QueryTracker,
            **TINY,
            n_layers=1,
            n_heads=2,
            ff=16,
            n_classes=1,
            cell=1.0,
            emb_dim=8,
            method="run_tracker",
            call={"seq": X[0], "new_thr": 0.5, "keep_thr": 0.35, "max_misses": 3},
            shapes={"seq": "T 2 G G"},
            bad={
                "grid": [4, 31],
                "d_model": [0],
                "n_obj_queries": [0],
                "cell": [0.0],
                "new_thr": [1.5],
                "keep_thr": [-0.1],
                "max_misses": [0],
            },
        ),
        Call(
            syncl.SynCLCriterion,
            hybrid=True,
            filter=True,
            icl=True,
            k=4,
            tau=0.1,
            kernel="cosine",
            w_cls=2.0,
            w_l1=0.25,
            w_icl=0.1,
            bad={"k": [0], "tau": [0.0, -1.0], "w_cls": [-1.0], "w_l1": [-1.0], "w_icl": [-0.1]},
        ),
        Call(
            syncl.train_tracker,
            model=syncl.QueryTracker(**TINY),
            rasters=X,
            gt=GT,
            criterion=syncl.SynCLCriterion(),
            steps=1,
            batch_size=2,
            clip_len=2,
            lr=1e-3,
            seed=0,
            max_misses=3,
            shapes={"rasters": "n T 2 G G"},
            bad={
                "steps": [0],
                "batch_size": [0],
                "clip_len": [0, 4],
                "lr": [0.0],
                "seed": [-1],
                "max_misses": [0],
                "gt": [GT[:2]],
                "model": [None],
                "criterion": [None],
            },
        ),
        Call(
            syncl.clear_mot,
            gt=SEQS,
            pred=PRED,
            dist_thr=2.0,
            bad={"dist_thr": [-1.0, 0.0], "pred": [PRED[:1]], "gt": [[[[{"id": 0}]]]]},
        ),
        Call(
            syncl.amota,
            gt=SEQS,
            pred=PRED,
            dist_thr=2.0,
            n_thresholds=40,
            min_recall=0.1,
            bad={
                "dist_thr": [-2.0],
                "n_thresholds": [0],
                "min_recall": [0.0, 1.5],
                "pred": [[[[{"id": 0, "center": np.zeros(2)}]]]],
            },
        ),
        Call(
            syncl.detection_ap,
            gt=SEQS,
            pred=PRED,
            dist_thr=2.0,
            bad={"dist_thr": [-1.0], "pred": [PRED[1:]]},
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
