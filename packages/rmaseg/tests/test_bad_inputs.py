"""Every public entry point with one valid call; the shared suite derives the bad ones."""

import numpy as np
import torch

import rmaseg
from paperkit.testing import BadInputs, Call
from rmaseg import data, metrics

SOFTMAX = torch.softmax(torch.randn(1, 3, 4, 4, generator=torch.Generator().manual_seed(0)), 1)
MAP = {"probs": "B C H W"}
P = np.array([0.9, 0.6, 0.1, 0.3])
MASK = P > 0.5
VECTOR = {"p": "d", "mask": "d"}
METRIC_BAD = {"smooth": [-0.1]}
# an empty batch gives an empty result; any number of spatial dimensions (so any rank >= 3)
MAPS_BY_DESIGN = {"probs": ["empty", "rank"]}

SUITE = BadInputs(
    rmaseg,
    [
        Call(
            rmaseg.rma_predict,
            probs=SOFTMAX,
            metric="iou",
            output_mode="multiclass",
            smooth=0.5,
            pruning_prob=0.1,
            solver="sort",
            unassigned_policy="void",
            void_index=255,
            shapes=MAP,
            bad={
                "probs": [1.5 * SOFTMAX, 0.5 * SOFTMAX],  # outside [0, 1]; not normalised
                "smooth": [-0.1],
                "pruning_prob": [-0.1, 1.5],
                "void_index": [1],  # a class index under "void"
            },
            accepts=MAPS_BY_DESIGN,
        ),
        Call(
            rmaseg.RankSEGRMA,
            metric="dice",
            output_mode="multilabel",
            smooth=0.0,
            pruning_prob=0.1,
            solver="linear",
            call={"probs": SOFTMAX},
            method="predict",
            shapes=MAP,
            bad={"pruning_prob": [2.0], "smooth": [-1.0], "probs": [1.5 * SOFTMAX]},
            accepts=MAPS_BY_DESIGN,
        ),
        Call(
            rmaseg.optimal_tau,
            probs=SOFTMAX.reshape(1, 3, 16),
            metric="dice",
            smooth=0.0,
            solver="linear",
            shapes={"probs": "B C D"},
            bad={"smooth": [-0.1, 1.0]},  # 1.0: the linear solver needs smooth = 0
            accepts={"probs": ["empty"]},
        ),
        Call(
            rmaseg.rma_objective,
            p=P,
            mask=MASK,
            metric="iou",
            smooth=0.0,
            shapes=VECTOR,
            bad=METRIC_BAD,
        ),
        Call(
            rmaseg.increment_scores,
            probs=SOFTMAX.reshape(1, 3, 16),
            masks=SOFTMAX.reshape(1, 3, 16) > 0.3,
            metric="dice",
            smooth=0.0,
            shapes={"probs": "B C D", "masks": "B C D"},
            bad=METRIC_BAD,
            accepts={"probs": ["empty"]},
        ),
        Call(rmaseg.argmax_predict, probs=SOFTMAX, shapes=MAP, accepts=MAPS_BY_DESIGN),
        Call(
            rmaseg.threshold_predict,
            probs=SOFTMAX,
            thr=0.5,
            shapes=MAP,
            bad={"thr": [-0.1, 1.1]},
            accepts=MAPS_BY_DESIGN,
        ),
        Call(
            rmaseg.expected_dice,
            {"method": "mc"},  # an argument named like Call's own option goes in the dict
            p=P,
            mask=MASK,
            smooth=0.0,
            n_draws=10,
            seed=0,
            shapes=VECTOR,
            bad={"smooth": [-0.1], "n_draws": [0, 10**13], "seed": [-1]},  # 10**13: 100 TB
        ),
        Call(
            rmaseg.expected_iou,
            {"method": "pmf"},
            p=P,
            mask=MASK,
            smooth=1.0,
            n_draws=10,
            seed=0,
            shapes=VECTOR,
            bad={"smooth": [-0.1], "n_draws": [0]},
        ),
        Call(rmaseg.poisson_binomial_pmf, p=P, bad={"p": [np.array([0.2, 1.5])]}),
        Call(rmaseg.rankdice_exact, p=P, bad={"p": [np.zeros(10**6)]}),  # O(d^2): 8 TB
        Call(rmaseg.rankiou_exact, p=P),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()

LABELS = np.array([[0, 1, 2, 1]])
MASKS = {"pred": SOFTMAX > 0.4, "target": SOFTMAX > 0.3}
METRICS = BadInputs(
    metrics,
    [
        Call(metrics.dice, **MASKS, smooth=0.0, empty=1.0, bad={"smooth": [-1.0]}),
        Call(metrics.iou, **MASKS, smooth=1.0, empty=0.0, bad={"smooth": [-1.0]}),
        *(
            Call(
                fn,
                pred=LABELS,
                target=LABELS[:, ::-1].copy(),
                num_classes=3,
                bad={"num_classes": [0]},
                accepts={"pred": ["negative"], "target": ["negative"]},  # a void label: no class
            )
            for fn in (
                metrics.miou_image,
                metrics.mdice_image,
                metrics.miou_dataset,
                metrics.mdice_dataset,
            )
        ),
    ],
)
test_bad_metric_input = METRICS.test()
test_every_metric_is_covered = METRICS.coverage_test()

DATA = BadInputs(
    data,
    [
        Call(
            data.calibrated_binary,
            n=2,
            size=8,
            seed=0,
            objects="confident",
            bad={"n": [0, 10**13], "size": [1, 10**8], "seed": [-1]},
        ),
        Call(
            data.calibrated_multiclass,
            n=2,
            C=3,
            size=8,
            seed=0,
            sharpness=2.5,
            bad={"n": [0], "C": [1, 10**13], "size": [1, 10**8]},
        ),
        Call(
            data.sample_labels,
            probs=SOFTMAX,
            n_draws=3,
            seed=0,
            output_mode="multiclass",
            shapes=MAP,
            bad={"n_draws": [0, 10**13], "seed": [-1]},
            accepts=MAPS_BY_DESIGN,
        ),
    ],
)
test_bad_data_input = DATA.test()
test_every_data_function_is_covered = DATA.coverage_test()
