"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``: alpha outside [0, 1], rho <= 0 or > 1, s_range with
min > max, ...)."""

import numpy as np
import torch

import shadowopacity
from paperkit.testing import BadInputs, Call, fresh

g = torch.Generator().manual_seed(0)
IMG = torch.rand(2, 3, 16, 16, generator=g)
ALPHA = torch.rand(2, 1, 16, 16, generator=g)
RHO = torch.full((2, 3), 0.5)
MAP = torch.rand(2, 1, 16, 16, generator=g)
FEAT = torch.randn(2, 4, 16, 16, generator=g)
IDS = torch.randint(0, 3, (2, 16, 16), generator=g)
S = torch.tensor([1.4, 0.6])
BAD_ALPHA = [ALPHA + 1.0, ALPHA - 1.0]
BAD_RHO = [torch.zeros(2, 3), torch.full((2, 3), 1.5)]
I3 = "B 3 H W"
A1 = "B 1 H W"
DATA = shadowopacity.make_shadow_scenes(8, 16, seed=0)


def _out():
    torch.manual_seed(0)
    with torch.no_grad():
        return shadowopacity.OpacityShadowNet(base=2, d_branch=4)(IMG)


def _net(cls, **kw):
    return Call(
        cls,
        name=f"{cls.__name__}.forward",
        base=2,
        **kw,
        call={"image": IMG},
        shapes={"image": I3},
        bad={"base": [0, 10**6], "image": [torch.rand(2, 3, 15, 16)]},
    )


SUITE = BadInputs(
    shadowopacity,
    [
        Call(
            shadowopacity.render_shadow,
            image_free=IMG,
            alpha=ALPHA,
            rho=RHO,
            shapes={"image_free": I3, "alpha": A1, "rho": "B 3"},
            bad={"alpha": BAD_ALPHA, "rho": BAD_RHO},
        ),
        Call(
            shadowopacity.remove_shadow,
            image=IMG,
            alpha=ALPHA,
            rho=RHO,
            eps=1e-3,
            shapes={"image": I3, "alpha": A1, "rho": "B 3"},
            bad={"alpha": BAD_ALPHA, "rho": BAD_RHO, "eps": [0.0, 2.0]},
        ),
        Call(
            shadowopacity.estimate_rho,
            image=IMG,
            alpha=ALPHA,
            min_pixels=10,
            shapes={"image": I3, "alpha": A1},
            bad={"alpha": BAD_ALPHA, "min_pixels": [0]},
        ),
        Call(
            shadowopacity.ShadowOpacityAugment,
            s_range=(0.3, 1.5),
            gamma_range=(0.7, 1.4),
            p=0.8,
            min_pixels=10,
            call={"image": IMG, "alpha": ALPHA, "image_free": IMG, "rho": RHO},
            shapes={"image": I3, "alpha": A1, "image_free": I3, "rho": "B 3"},
            bad={
                "s_range": [(1.5, 0.3), (0.0, 1.0), (1.0,)],
                "gamma_range": [(1.4, 0.7)],
                "p": [-0.1, 1.5],
                "min_pixels": [0],
                "alpha": BAD_ALPHA,
                "rho": BAD_RHO,
            },
        ),
        Call(
            shadowopacity.remove_predicted_shadow,
            image=IMG,
            alpha_hat=ALPHA,
            min_pixels=10,
            shapes={"image": I3, "alpha_hat": A1},
            bad={"alpha_hat": BAD_ALPHA},
        ),
        Call(
            shadowopacity.edit_shadow,
            image=IMG,
            alpha=ALPHA,
            s=0.5,
            gamma=1.0,
            image_free=IMG,
            rho=RHO,
            min_pixels=10,
            shapes={"image": I3, "alpha": A1, "image_free": I3, "rho": "B 3"},
            bad={"alpha": BAD_ALPHA, "rho": BAD_RHO, "s": [-1.0], "gamma": [0.0]},
        ),
        Call(
            shadowopacity.make_shadow_scenes,
            n=2,
            size=16,
            seed=0,
            max_occluders=2,
            soft=True,
            translucent=True,
            bad={"n": [0, 10**7], "size": [8, 10**4], "seed": [-1], "max_occluders": [0, 100]},
        ),
        Call(
            shadowopacity.binarize_dataset,
            alpha=ALPHA,
            thr=0.5,
            shapes={"alpha": A1},
            bad={"alpha": BAD_ALPHA, "thr": [1.0, -0.1]},
        ),
        Call(
            shadowopacity.polygon_mask,
            vertices=np.array([[[1.0, 1.0], [6.0, 1.0], [6.0, 6.0]]]),
            size=8,
            shapes={"vertices": "P V 2"},
            bad={"size": [0], "vertices": [np.zeros((1, 2, 2))]},
        ),
        _net(shadowopacity.OpacityShadowNet, d_branch=4),
        _net(shadowopacity.BinaryShadowNet),
        _net(shadowopacity.DirectOpacityNet),
        Call(shadowopacity.UNetEncoder, base=2, bad={"base": [0]}),
        Call(
            shadowopacity.SeparationLoss,
            w_pos=1.0,
            w_inv=0.1,
            w_rank=0.1,
            w_dec=0.01,
            w_grad=0.5,
            margin=0.05,
            call={
                "out": fresh(_out),
                "alpha": MAP,
                "out_aug": fresh(_out),
                "alpha_aug": MAP,
                "s": S,
            },
            shapes={"alpha": "2 1 16 16", "alpha_aug": "2 1 16 16", "s": "2"},
            bad={"w_pos": [-1.0], "w_dec": [-0.1], "out": [{"alpha": MAP}]},
        ),
        Call(shadowopacity.sobel, x=MAP, shapes={"x": "B 1 H W"}),
        Call(
            shadowopacity.opacity_loss,
            alpha_hat=MAP,
            alpha=ALPHA,
            w_grad=0.5,
            shapes={"alpha_hat": A1, "alpha": A1},
            bad={"w_grad": [-1.0]},
        ),
        Call(
            shadowopacity.position_loss,
            pos_logit=MAP,
            mask=ALPHA,
            eps=1.0,
            shapes={"pos_logit": A1, "mask": A1},
            bad={"eps": [0.0]},
        ),
        Call(
            shadowopacity.invariance_loss,
            P=FEAT,
            P_aug=FEAT,
            shapes={"P": "B C H W", "P_aug": "B C H W"},
        ),
        Call(
            shadowopacity.rank_loss,
            op_logit=MAP,
            op_logit_aug=MAP,
            mask=ALPHA,
            s=S,
            margin=0.05,
            shapes={"op_logit": A1, "op_logit_aug": A1, "mask": A1, "s": "B"},
            bad={"margin": [-1.0]},
        ),
        Call(
            shadowopacity.decorrelation_loss,
            P=FEAT,
            O=FEAT,
            eps=1e-5,
            shapes={"P": "B C H W", "O": "B D H W"},
            bad={"eps": [0.0]},
        ),
        Call(
            shadowopacity.opacity_mae,
            pred=MAP,
            gt=ALPHA,
            shapes={"pred": "B C H W", "gt": "B C H W"},
        ),
        Call(
            shadowopacity.opacity_rmse,
            pred=MAP,
            gt=ALPHA,
            shapes={"pred": "B C H W", "gt": "B C H W"},
        ),
        Call(
            shadowopacity.ber,
            pred_bin=MAP > 0.5,
            gt_bin=ALPHA > 0.5,
            shapes={"pred_bin": "B C H W", "gt_bin": "B C H W"},
        ),
        Call(
            shadowopacity.binned_mae,
            pred=MAP,
            gt=ALPHA,
            bins=(0.05, 0.35, 0.65, 1.0),
            shapes={"pred": "B C H W", "gt": "B C H W"},
            bad={"bins": [(0.5, 0.2), (0.1, 2.0), (0.5,)]},
        ),
        Call(
            shadowopacity.instance_opacities,
            alpha=ALPHA,
            instance_ids=IDS,
            shapes={"alpha": A1, "instance_ids": "B H W"},
        ),
        Call(
            shadowopacity.instance_opacity_kendall,
            pred=MAP,
            gt=ALPHA,
            instance_ids=IDS,
            shapes={"pred": "B C H W", "gt": "B C H W"},
            bad={"instance_ids": [torch.zeros(2, 16, 16, dtype=torch.long)]},
        ),
        Call(
            shadowopacity.removal_psnr,
            pred_free=IMG,
            gt_free=IMG,
            shapes={"pred_free": "B C H W", "gt_free": "B C H W"},
        ),
        Call(
            shadowopacity.train_method,
            {"method": "ours"},
            data=DATA,
            steps=1,
            batch_size=2,
            base=2,
            seed=0,
            lr=1e-3,
            show_progress=False,
            bad={
                "steps": [0, 10**7],
                "batch_size": [0],
                "lr": [0.0],
                "seed": [-1],
                "data": [{"image": IMG}],
            },
        ),
        Call(
            shadowopacity.evaluate,
            model=shadowopacity.DirectOpacityNet(2),
            data=DATA,
            batch_size=4,
            bad={"batch_size": [0], "data": [[1, 2]]},
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
