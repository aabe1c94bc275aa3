"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``); pixels outside [0, 1] are refused in test_energy.py."""

import numpy as np
import torch

import idenergy
from idenergy.ssl import DinoLite
from paperkit.testing import BadInputs, Call

torch.manual_seed(0)
BB = DinoLite(1, n_prototypes=8).eval()
g = np.random.default_rng(0)
X16 = g.random((12, 1, 16, 16)).astype(np.float32)
X8 = g.random((12, 1, 8, 8)).astype(np.float32)
T16 = torch.from_numpy(X16[:4].copy())
Y = np.r_[np.zeros(6), np.ones(6)]
SCORES = g.random(12)
IMG = {"X": "N C H W"}


def _fit(X):
    return lambda det: det.fit(X)


def _detector(cls, method, **kwargs):
    call = {"X": X16}
    prepare = None if method == "fit" else _fit(X16)
    return Call(
        cls,
        name=f"{cls.__name__}.{method}",
        method=method,
        call=call,
        prepare=prepare,
        shapes=IMG,
        **kwargs,
    )


def _generator(cls, bad, **kwargs):
    return [
        Call(
            cls,
            name=f"{cls.__name__}.fit",
            method="fit",
            call={"X": X8},
            shapes=IMG,
            bad=bad,
            **kwargs,
        ),
        Call(
            cls,
            name=f"{cls.__name__}.sample",
            method="sample",
            prepare=_fit(X8),
            call={"n": 3, "seed": 0},
            bad={"n": [0, 10**7], "seed": [-1]},
            **kwargs,
        ),
    ]


BACKBONE_ARGS = {"bad": {"T": [0.0, -1.0], "tnr": [0.0, 1.0], "batch_size": [0]}}

SUITE = BadInputs(
    idenergy,
    [
        Call(
            idenergy.id_energy,
            logits=torch.randn(3, 5),
            T=1.0,
            shapes={"logits": "B P"},
            bad={"T": [0.0, -1.0]},
        ),
        Call(
            idenergy.differential_energy,
            model=BB,
            x=T16,
            sigma=0.05,
            n=2,
            mode="abs",
            perturb="noise",
            T=1.0,
            shapes={"x": "B C H W"},
            bad={"sigma": [-0.1, 2.0], "n": [0, 10**6], "T": [0.0, -2.0]},
        ),
        Call(
            idenergy.gaussian_blur,
            x=T16,
            std=0.5,
            shapes={"x": "B C H W"},
            bad={"std": [0.0, -1.0, 100.0]},
            accepts={"x": {"nan", "inf"}},  # a linear filter: NaN and inf propagate (documented)
        ),
        Call(
            idenergy.DinoLite,
            in_ch=1,
            n_prototypes=8,
            width=16,
            hidden=8,
            bottleneck=4,
            tau_student=0.1,
            bad={"in_ch": [0, 5], "n_prototypes": [1], "width": [4], "tau_student": [0.0]},
        ),
        Call(
            idenergy.DinoLite,
            name="DinoLite.collapse_stats",
            in_ch=1,
            n_prototypes=8,
            method="collapse_stats",
            call={"X": X16, "batch_size": 4},
            shapes=IMG,
            bad={"batch_size": [0]},
        ),
        Call(
            idenergy.collapse_stats,
            backbone=BB,
            X=X16,
            batch_size=4,
            shapes=IMG,
            bad={"batch_size": [0]},
        ),
        Call(
            idenergy.train_dino_lite,
            X_natural=X16,
            steps=1,
            seed=0,
            balance="center",
            n_prototypes=8,
            batch_size=4,
            lr=1e-3,
            tau_teacher=0.04,
            momentum=0.9,
            center_momentum=0.9,
            shapes={"X_natural": "N C H W"},
            bad={
                "steps": [0],
                "seed": [-1],
                "n_prototypes": [1],
                "batch_size": [1],
                "lr": [0.0],
                "tau_teacher": [0.0],
                "momentum": [1.5],
                "center_momentum": [-0.1],
            },
        ),
        Call(idenergy.IDHeadBackbone, base=BB),
        Call(
            idenergy.fit_id_head,
            backbone=BB,
            X_natural=X16,
            steps=2,
            seed=0,
            m_in=-8.0,
            m_out=-3.0,
            lr=0.01,
            corruptions=1,
            shapes={"X_natural": "N C H W"},
            bad={
                "steps": [0],
                "m_out": [-9.0],
                "lr": [0.0],
                "corruptions": [0],
                "X_natural": [X16[:, :, :, :14]],
            },
        ),
        _detector(
            idenergy.DEnDDetector,
            "fit",
            backbone=BB,
            T=1.0,
            sigma=0.05,
            n=2,
            mode="abs",
            perturb="noise",
            seed=0,
            tnr=0.95,
            batch_size=8,
            bad={"sigma": [-0.1], "n": [0], "T": [0.0], "tnr": [1.0], "batch_size": [0]},
        ),
        _detector(idenergy.DEnDDetector, "predict", backbone=BB, n=2),
        _detector(
            idenergy.EnergyDetector,
            "score_samples",
            backbone=BB,
            T=1.0,
            tnr=0.95,
            batch_size=8,
            **BACKBONE_ARGS,
        ),
        _detector(
            idenergy.MSPDetector,
            "score_samples",
            backbone=BB,
            T=1.0,
            tnr=0.95,
            batch_size=8,
            **BACKBONE_ARGS,
        ),
        _detector(
            idenergy.KNNDetector,
            "fit",
            backbone=BB,
            k=3,
            tnr=0.95,
            batch_size=8,
            bad={"k": [0], "tnr": [0.0]},
        ),
        _detector(idenergy.KNNDetector, "score_samples", backbone=BB, k=3),
        _detector(
            idenergy.RigidDetector,
            "score_samples",
            backbone=BB,
            sigma=0.05,
            n=1,
            seed=0,
            tnr=0.95,
            batch_size=8,
            bad={"sigma": [-1.0], "n": [0], "seed": [-1]},
        ),
        _detector(idenergy.PCAReconDetector, "fit", k=4, tnr=0.95, batch_size=8, bad={"k": [0]}),
        _detector(idenergy.PCAReconDetector, "score_samples", k=4),
        Call(
            idenergy.SupervisedDetector,
            name="SupervisedDetector.fit",
            steps=1,
            seed=0,
            lr=1e-3,
            batch_size=8,
            method="fit",
            call={"X": X16, "y": Y},
            shapes={"X": "N C H W", "y": "N"},
            bad={"steps": [0], "lr": [0.0], "seed": [-1]},
        ),
        Call(
            idenergy.SupervisedDetector,
            name="SupervisedDetector.predict",
            steps=1,
            method="predict",
            prepare=lambda d: d.fit(X16, Y),
            call={"X": X16},
            shapes=IMG,
        ),
        *_generator(idenergy.PCAGaussianGenerator, k=4, bad={"k": [0]}),
        *_generator(
            idenergy.PixelGMMGenerator,
            n_components=2,
            reg_covar=1e-3,
            max_iter=5,
            bad={"n_components": [0], "reg_covar": [0.0], "max_iter": [0]},
        ),
        *_generator(
            idenergy.TinyVAEGenerator,
            latent=2,
            steps=2,
            hidden=8,
            seed=0,
            bad={"latent": [0], "steps": [0], "hidden": [0]},
        ),
        *_generator(
            idenergy.UpsampleArtifactGenerator,
            factor=2,
            mode="transposed",
            strength=0.2,
            bad={"factor": [1], "strength": [-0.1, 2.0]},
        ),
        *_generator(
            idenergy.MixupGenerator, low=0.3, high=0.7, bad={"low": [-0.1], "high": [0.1, 1.5]}
        ),
        Call(idenergy.image_hashes, X=X8, shapes=IMG),
        Call(idenergy.load_digits_images, size=8, bad={"size": [4, 1000]}),
        Call(
            idenergy.make_dead_leaves,
            n=2,
            size=8,
            seed=0,
            disks=5,
            blur=0.5,
            noise=0.01,
            bad={
                "n": [0, 10**7],
                "size": [4],
                "seed": [-1],
                "disks": [0],
                "blur": [-1.0],
                "noise": [2.0],
            },
        ),
        Call(
            idenergy.auroc,
            scores=SCORES,
            labels=Y,
            shapes={"scores": "N", "labels": "N"},
            bad={"labels": [np.full(12, 2.0), np.zeros(12)]},
        ),
        Call(
            idenergy.average_precision,
            scores=SCORES,
            labels=Y,
            shapes={"scores": "N", "labels": "N"},
            bad={"labels": [np.ones(12)]},
        ),
        Call(
            idenergy.fpr_at_tpr,
            scores=SCORES,
            labels=Y,
            tpr=0.95,
            shapes={"scores": "N", "labels": "N"},
            bad={"tpr": [0.0, 1.5]},
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
