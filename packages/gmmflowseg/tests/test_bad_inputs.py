"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``: sigma_min >= sigma_max, mu_max <= 0, ...)."""

import numpy as np
import torch

import gmmflowseg
from paperkit.testing import BadInputs, Call, fresh

g = torch.Generator().manual_seed(0)
x = torch.randn(2, 1, 8, 8, generator=g)
y = torch.randint(0, 2, (2, 8, 8), generator=g)
IMAGE = {"x": "B 1 H W", "y": "B H W"}
SMALL = {"base": 4, "depth": 2}
masks = np.random.default_rng(0).random((3, 8, 8)) < 0.4
gts = np.random.default_rng(1).random((4, 8, 8)) < 0.4
q = gmmflowseg.GMMParams(torch.randn(2, 4), torch.randn(2, 4, 6), torch.rand(2, 4, 6) + 0.1)
p = gmmflowseg.GMMParams(torch.randn(2, 4), torch.randn(2, 4, 6), torch.rand(2, 4, 6) + 0.1)
cond = torch.randn(2, 3, generator=g)


def coupling_flow():
    return gmmflowseg.FlowSequence(
        [gmmflowseg.AffineCoupling(6, 3, hidden=8, parity=i % 2) for i in range(2)]
    )


def model_calls(cls, name, **kwargs):
    init = {"in_ch": 1, "n_classes": 2, **SMALL, **kwargs}
    bad = {"in_ch": [0], "n_classes": [1], "depth": [0, 9], "base": [0]}
    bad.update({k: v for k, v in BAD_HYPER.items() if k in init})
    return [
        Call(
            cls,
            init,
            call={"x": x, "y": y},
            method="elbo",
            shapes=IMAGE,
            bad=bad,
            name=f"{name}.elbo",
        ),
        Call(
            cls,
            init,
            call={"x": x, "n_samples": 3},
            method="sample",
            shapes={"x": "B 1 H W"},
            bad={"n_samples": [0, 10**9]},
            name=f"{name}.sample",
        ),
    ]


BAD_HYPER = {
    "latent_dim": [0],
    "n_components": [0],
    "n_flows": [0],
    "beta": [-1.0],
    "lam_ent": [-0.1],
    "mu_max": [0.0, -1.0],
    "sigma_min": [0.5, 0.7, 0.0],
    "sigma_max": [0.05, 0.01],
}

HEAD = ("latent_dim", "n_components", "mu_max", "sigma_min", "sigma_max")

SUITE = BadInputs(
    gmmflowseg,
    [
        *model_calls(
            gmmflowseg.GMMFlowSegNet,
            "GMMFlowSegNet",
            latent_dim=6,
            n_components=4,
            flow="coupling",
            n_flows=2,
            constrain=True,
            beta=1.0,
            mu_max=2.0,
            sigma_min=0.05,
            sigma_max=0.5,
            kl="joint",
            lam_ent=0.01,
            prior_flow=True,
        ),
        *model_calls(
            gmmflowseg.ProbUNet, "ProbUNet", latent_dim=6, beta=1.0, flow="planar", n_flows=2
        ),
        *model_calls(gmmflowseg.DeterministicUNet, "DeterministicUNet"),
        Call(
            gmmflowseg.UNetBackbone,
            in_ch=1,
            base=4,
            depth=2,
            call={"x": x},
            shapes={"x": "B 1 H W"},
            bad={"depth": [0], "base": [0], "in_ch": [0]},
        ),
        Call(
            gmmflowseg.ConvEncoder,
            in_ch=1,
            base=4,
            depth=2,
            call={"x": x},
            shapes={"x": "B 1 H W"},
            bad={"depth": [0], "base": [0], "in_ch": [0]},
        ),
        Call(
            gmmflowseg.Fcomb,
            feat_ch=4,
            latent_dim=6,
            n_classes=2,
            call={"feat": torch.randn(2, 4, 8, 8), "z": torch.randn(2, 6)},
            shapes={"feat": "B 4 H W", "z": "B 6"},
            accepts={"z": {"rank"}},
            bad={"feat_ch": [0], "latent_dim": [0], "n_classes": [1]},
        ),
        Call(
            gmmflowseg.GMMHead,
            in_dim=8,
            latent_dim=6,
            n_components=4,
            mu_max=2.0,
            sigma_min=0.05,
            sigma_max=0.5,
            constrain=True,
            call={"h": torch.randn(3, 8)},
            shapes={"h": "B 8"},
            bad={"in_dim": [0], **{k: v for k, v in BAD_HYPER.items() if k in HEAD}},
        ),
        Call(
            gmmflowseg.MixtureLatent,
            params=q,
            call={"z": torch.randn(2, 6)},
            method="log_prob",
            shapes={"z": "2 6"},
            name="MixtureLatent.log_prob",
            bad={"params": [(q.logits, q.mu, q.sigma), q._replace(sigma=-q.sigma)]},
        ),
        Call(
            gmmflowseg.PlanarFlow,
            dim=6,
            call={"z": torch.randn(3, 6)},
            shapes={"z": "B 6"},
            bad={"dim": [0]},
        ),
        Call(
            gmmflowseg.AffineCoupling,
            dim=6,
            cond_dim=3,
            hidden=8,
            parity=0,
            call={"z": torch.randn(2, 6), "cond": cond},
            shapes={"z": "B 6", "cond": "B 3"},
            bad={"dim": [1], "hidden": [0], "parity": [2], "cond_dim": [-1]},
        ),
        Call(
            gmmflowseg.FlowSequence,
            layers=fresh(lambda: list(coupling_flow().layers)),
            call={"z0": torch.randn(2, 6), "cond": cond},
            shapes={"z0": "B 6", "cond": "B 3"},
            bad={"layers": [[], [gmmflowseg.PlanarFlow(3), gmmflowseg.PlanarFlow(4)]]},
        ),
        Call(
            gmmflowseg.kl_joint,
            q=q,
            p=p,
            flow=fresh(coupling_flow),
            cond=cond,
            n_samples=2,
            shapes={"cond": "2 3"},
            bad={"n_samples": [0], "q": [None], "p": [p[:2]], "flow": [torch.nn.Linear(2, 2)]},
        ),
        Call(
            gmmflowseg.kl_marginal,
            q=q,
            p=p,
            flow=fresh(coupling_flow),
            cond=cond,
            shapes={"cond": "2 3"},
            bad={"q": [q._replace(mu=q.mu[:, :2])], "p": [None]},
        ),
        Call(
            gmmflowseg.iou,
            a=masks[0],
            b=gts[0],
            shapes={"a": "H W", "b": "H W"},
            bad={"a": [np.full((8, 8), 2)]},
        ),
        Call(
            gmmflowseg.ged,
            samples=masks,
            gts=gts,
            shapes={"samples": "S H W", "gts": "G H W"},
            bad={"gts": [gts * 3]},
        ),
        Call(
            gmmflowseg.hm_iou,
            samples=masks,
            gts=gts,
            shapes={"samples": "S H W", "gts": "G H W"},
            bad={"samples": [masks * 0.5]},
        ),
        Call(
            gmmflowseg.diversity,
            samples=masks,
            shapes={"samples": "S H W"},
            bad={"samples": [np.full((2, 4, 4), 7)]},
        ),
        Call(
            gmmflowseg.component_mode_nmi,
            comps=np.zeros((2, 3), np.int64),
            samples=np.stack([masks, masks]),
            gts=np.stack([gts, gts]),
            modes=np.tile(np.arange(4), (2, 1)),
            shapes={"comps": "N S", "samples": "N S H W", "gts": "N A H W", "modes": "N A"},
        ),
        Call(
            gmmflowseg.latent_diagnostics,
            model=fresh(lambda: gmmflowseg.GMMFlowSegNet(1, 2, **SMALL)),
            loader=[(x, y)],
            bad={"model": [torch.nn.Linear(2, 2)], "loader": [[], 3, [x]]},
        ),
        Call(
            gmmflowseg.make_ambiguous_lesions,
            n=3,
            size=16,
            n_annotators=4,
            seed=0,
            bad={"n": [0, 10**9], "size": [4], "n_annotators": [0], "seed": [-1]},
        ),
        Call(
            gmmflowseg.make_cracks,
            n=2,
            size=32,
            n_annotators=4,
            seed=0,
            bad={"n": [0, 10**9], "size": [8], "n_annotators": [0], "seed": [-1]},
        ),
    ],
    exempt={
        "GMMParams": "a NamedTuple of three tensors; every function taking one checks it "
        "(the 'params', 'q' and 'p' cases above)"
    },
)
test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
