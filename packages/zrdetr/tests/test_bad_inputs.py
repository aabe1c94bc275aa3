"""Every public entry point with one valid call; paperkit's shared suite derives the bad ones
(NaN/inf, empty, wrong rank, mismatched shapes, wrong dtype or type, out-of-range values)."""

import numpy as np
import torch

import zrdetr
from paperkit.testing import BadInputs, Call, fresh

G = torch.Generator().manual_seed(0)
IMAGES = torch.rand(2, 1, 32, 32, generator=G)
ZOOM = torch.tensor([1.0, 1.3])
BOXES = torch.tensor([[0.3, 0.3, 0.1, 0.1], [0.6, 0.4, 0.2, 0.1], [0.5, 0.7, 0.1, 0.2]])
FIT_BOXES = [BOXES.numpy() * (1 + 0.05 * i) for i in range(4)]
FIT_LABELS = [np.arange(3)] * 4
XYXY = torch.tensor([[0.0, 0.0, 0.5, 0.5], [0.2, 0.1, 0.9, 0.7]])
DETS = [
    {"boxes": np.array([[0.0, 0.0, 1.0, 1.0]]), "scores": np.array([0.9]), "labels": np.array([0])}
]
GTS = [{"boxes": np.array([[0.0, 0.0, 1.0, 0.9]]), "labels": np.array([0])}]
W_ZERO = [b * np.array([1, 1, 0, 1]) for b in FIT_BOXES]
MODEL_BAD = {
    "n_classes": [0, 10**6],
    "d_model": [4, 10, 10**6],
    "n_extra_queries": [-1],
    "n_inducing": [0],
    "mc_samples": [0],
}


def _outputs():
    torch.manual_seed(0)
    return zrdetr.ZRDETR(3, d_model=16).eval()(IMAGES, ZOOM)


TARGETS = {
    "boxes": BOXES[None].expand(2, 3, 4).clone(),
    "present": torch.ones(2, 3, dtype=torch.bool),
    "zoom": ZOOM,
}


def _fit(prior):
    prior.fit(FIT_BOXES, FIT_LABELS)


SUITE = BadInputs(
    zrdetr,
    [
        Call(
            zrdetr.ZoomEmbedding,
            d_model=8,
            n_freq=4,
            call={"zoom": ZOOM},
            shapes={"zoom": "B"},
            bad={
                "d_model": [0, 10**6],
                "n_freq": [0, 100],
                "zoom": [torch.tensor([0.0, 1.0]), torch.tensor([-1.0, 1.0])],
            },
        ),
        Call(
            zrdetr.ZoomFiLM,
            d_model=8,
            call={"tokens": torch.randn(2, 5, 8, generator=G), "e": torch.randn(2, 8, generator=G)},
            shapes={"tokens": "B N 8", "e": "B 8"},
            bad={"d_model": [0]},
        ),
        Call(
            zrdetr.ZoomRegressor,
            d_model=8,
            call={"tokens": torch.randn(2, 5, 8, generator=G)},
            shapes={"tokens": "B N 8"},
            bad={"d_model": [0]},
        ),
        Call(
            zrdetr.BoxZoomEstimator,
            n_classes=3,
            init_log_size=-1.9,
            call={
                "boxes": torch.rand(2, 5, 4, generator=G) * 0.3 + 0.2,
                "probs": torch.rand(2, 5, 3, generator=G),
            },
            shapes={"boxes": "B Q 4", "probs": "B Q 3"},
            bad={"n_classes": [0, 10**6], "init_log_size": [1.0, float("nan")]},
        ),
        Call(
            zrdetr.RelationBias,
            n_classes=3,
            call={"n_queries": 5},
            bad={"n_classes": [0], "n_queries": [2, 10**6]},
        ),
        Call(
            zrdetr.AnatomicalRelationPrior,
            n_classes=3,
            ridge=1e-3,
            min_count=2,
            call={"boxes": FIT_BOXES, "labels": FIT_LABELS},
            method="fit",
            bad={
                "n_classes": [1],
                "ridge": [0.0],
                "min_count": [1],
                "boxes": [W_ZERO, [], "boxes", FIT_BOXES[:2]],
                "labels": [[np.array([0, 1, 3])] * 4, [np.array([0, 1, 1])] * 4, [np.zeros(3)] * 4],
            },
        ),
        Call(
            zrdetr.AnatomicalRelationPrior,
            n_classes=3,
            name="AnatomicalRelationPrior.nll",
            method="nll",
            prepare=_fit,
            call={
                "boxes": BOXES[None].repeat(2, 1, 1),
                "present": torch.tensor([[True, True, False], [True, True, True]]),
            },
            shapes={"boxes": "B 3 4", "present": "B 3"},
            bad={"boxes": [BOXES[None].repeat(2, 1, 1) * torch.tensor([1.0, 1.0, -1.0, 1.0])]},
        ),
        Call(
            zrdetr.SVGPHead,
            in_dim=8,
            out_dim=3,
            n_inducing=4,
            feat_dim=2,
            jitter=1e-4,
            mean_function="linear",
            call={"h": torch.randn(2, 3, 8, generator=G)},
            shapes={"h": "B Q 8"},
            bad={
                "in_dim": [0],
                "out_dim": [0],
                "n_inducing": [0, 10**6],
                "feat_dim": [0],
                "jitter": [-1.0],
            },
        ),
        Call(
            zrdetr.gaussian_nll,
            mean=torch.zeros(2, 3),
            var=torch.ones(2, 3),
            target=torch.ones(2, 3),
            shapes={"mean": "a b", "var": "a b", "target": "a b"},
            bad={"var": [torch.zeros(2, 3)]},
        ),
        Call(
            zrdetr.ZRDETR,
            n_classes=3,
            d_model=16,
            n_extra_queries=2,
            use_zoom=True,
            use_relation=True,
            head="gp",
            n_inducing=4,
            feat_dim=4,
            n_heads=2,
            enc_layers=1,
            dec_layers=2,
            ff_dim=16,
            mc_samples=2,
            in_channels=1,
            gp_mean="linear",
            call={"images": IMAGES, "zoom": ZOOM},
            shapes={"images": "B 1 H W", "zoom": "B"},
            bad={
                **MODEL_BAD,
                "n_heads": [3],
                "images": [torch.rand(2, 1, 4, 4), torch.rand(2, 3, 32, 32)],
                "zoom": [torch.tensor([0.0, 1.0]), torch.tensor([1.0, -2.0])],
            },
        ),
        Call(
            zrdetr.ZRDETRCriterion,
            n_classes=3,
            n_train=10,
            class_queries=True,
            eos_coef=0.1,
            w_rel=0.1,
            deep_supervision=True,
            call={"outputs": fresh(_outputs), "targets": TARGETS},
            bad={
                "n_classes": [0],
                "n_train": [0],
                "eos_coef": [0.0, 2.0],
                "w_rel": [-1.0],
                "outputs": ["not outputs", {}],
            },
        ),
        Call(
            zrdetr.hungarian_match,
            cost=torch.randn(4, 3, generator=G),
            shapes={"cost": "Q G"},
            bad={"cost": [torch.randn(2, 3, generator=G)]},
        ),
        Call(
            zrdetr.box_cxcywh_to_xyxy,
            boxes=BOXES.clone(),
            shapes={"boxes": "N 4"},
            accepts={"boxes": {"rank"}},
        ),
        Call(
            zrdetr.box_xyxy_to_cxcywh,
            boxes=XYXY.clone(),
            shapes={"boxes": "N 4"},
            accepts={"boxes": {"rank"}},
        ),
        Call(
            zrdetr.box_iou,
            boxes1=XYXY.clone(),
            boxes2=XYXY.clone(),
            shapes={"boxes1": "N 4", "boxes2": "M 4"},
            bad={"boxes1": [XYXY[:, [2, 3, 0, 1]]]},
        ),
        Call(
            zrdetr.generalized_box_iou,
            boxes1=XYXY.clone(),
            boxes2=XYXY.clone(),
            shapes={"boxes1": "N 4", "boxes2": "M 4"},
            bad={"boxes2": [XYXY[:, [2, 3, 0, 1]]]},
        ),
        Call(
            zrdetr.mean_ap,
            dets=DETS,
            gts=GTS,
            iou_thresholds=[0.5, 0.75],
            max_dets=10,
            bad={
                "dets": [[], "dets", [{"boxes": np.zeros((1, 4))}]],
                "gts": [GTS * 2],
                "iou_thresholds": [[0.0], [1.5]],
                "max_dets": [0],
            },
        ),
        Call(zrdetr.ap50, dets=DETS, gts=GTS, bad={"gts": [[], GTS * 2]}),
        Call(
            zrdetr.bootstrap_map,
            dets=DETS,
            gts=GTS,
            iou_thresholds=[0.5],
            n_boot=5,
            seed=0,
            bad={"n_boot": [0], "seed": [-1], "gts": [GTS * 2]},
        ),
        Call(
            zrdetr.ece,
            probs=np.array([0.2, 0.9, 0.6]),
            correct=np.array([False, True, True]),
            n_bins=5,
            shapes={"probs": "n", "correct": "n"},
            bad={"probs": [np.array([0.2, 1.5, 0.6])], "n_bins": [0]},
        ),
        Call(
            zrdetr.uncertainty_error_spearman,
            var=np.array([0.1, 0.3, 0.2]),
            iou=np.array([0.9, 0.2, 0.5]),
            shapes={"var": "n", "iou": "n"},
            bad={"var": [np.array([-0.1, 0.3, 0.2]), np.array([0.1])]},
        ),
        Call(
            zrdetr.make_anatomy_scenes,
            n=2,
            image_size=16,
            n_classes=3,
            zoom_range=(0.8, 1.25),
            domain="source",
            seed=0,
            bad={
                "n": [0, 10**12],
                "image_size": [8, 10**5],
                "n_classes": [1, 100],
                "zoom_range": [(0.0, 1.0), (2.0, 1.0), (1.0,)],
                "seed": [-1],
            },
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
