"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``). A time ``t`` may be 0-d (broadcast, documented)."""

import torch

import mvou
from paperkit.testing import BadInputs, Call, fresh

F64 = torch.float64
g = torch.Generator().manual_seed(0)
A = torch.tensor([[-1.0, 3.0], [-3.0, -1.0]], dtype=F64)
m = torch.tensor([0.5, -0.5], dtype=F64)
x0 = torch.randn(6, 2, generator=g, dtype=F64)
x1 = torch.randn(6, 2, generator=g, dtype=F64)
eps = torch.randn(6, 2, generator=g, dtype=F64)
t = torch.tensor([0.1, 0.3, 0.5, 0.6, 0.8, 0.9], dtype=F64)
grid = torch.tensor([0.0, 0.5, 1.0], dtype=F64)
P = torch.tensor([[0.5, 0.1], [0.1, 0.3]], dtype=F64)
REF = mvou.MvOU(A, m, 0.5)
INIT = {"A": A, "m": m, "sigma": 0.5}
POINTS = {"x0": "B d", "x1": "B d", "t": "B"}  # in the order the entry points check them
T_ANY_RANK = {"t": {"rank"}}  # a 0-d time broadcasts over the batch (documented)
GSB = {"a": m, "P0": P, "b": -m, "P1": 2 * P, "ref": REF}


def _fit(model):
    model.fit([x0, x1], [0.0, 1.0], steps=1, batch=8, progress=False)


def _fitted():
    model = mvou.MvOUOTFM(REF, hidden=8, depth=1)
    _fit(model)
    return model


def _ref_call(method, call, shapes, bad=None, accepts=None):
    return Call(
        mvou.MvOU,
        INIT,
        name=f"MvOU.{method}",
        method=method,
        call=call,
        shapes=shapes,
        bad=bad,
        accepts=accepts,
    )


OTFM = {"ref": REF, "hidden": 8, "depth": 1}

SUITE = BadInputs(
    mvou,
    [
        Call(mvou.MvOU, INIT, shapes={"A": "d d", "m": "d"}, bad={"sigma": [0.0, -1.0]}),
        _ref_call("phi", {"t": t}, {}, bad={"t": [torch.tensor([1.5])]}, accepts=T_ANY_RANK),
        _ref_call("cov", {"t": t}, {}, bad={"t": [torch.tensor([-0.5])]}, accepts=T_ANY_RANK),
        _ref_call(
            "transition_logpdf",
            {"x0": x0, "x1": x1, "t": t},
            POINTS,
            bad={"t": [torch.zeros(6, dtype=F64)]},
            accepts=T_ANY_RANK,
        ),
        _ref_call(
            "bridge", {"t": t, "x0": x0, "x1": x1}, POINTS, bad={"t": [t + 1]}, accepts=T_ANY_RANK
        ),
        _ref_call(
            "bridge_drift",
            {"t": t, "x": x0, "x1": x1},
            {"x": "B d", "x1": "B d", "t": "B"},
            bad={"t": [torch.ones(6, dtype=F64)]},
            accepts=T_ANY_RANK,
        ),
        _ref_call(
            "bridge_targets",
            {"t": t, "x0": x0, "x1": x1, "eps": eps},
            {"x0": "B d", "x1": "B d", "eps": "B d", "t": "B"},
            bad={"t": [torch.zeros(6, dtype=F64)]},
            accepts=T_ANY_RANK,
        ),
        _ref_call(
            "simulate",
            {"x0": x0, "t_grid": grid},
            {"x0": "N d"},
            bad={"t_grid": [torch.tensor([0.0, 0.5, 0.4]), torch.tensor([0.0, 2.0])]},
        ),
        Call(mvou.sb_cost_matrix, x0=x0, x1=x1, ref=REF, shapes={"x0": "n d", "x1": "k d"}),
        Call(
            mvou.entropic_plan,
            x0=x0,
            x1=x1,
            ref=REF,
            reg=1.0,
            method="sinkhorn_log",
            shapes={"x0": "n d", "x1": "k d"},
            bad={"reg": [0.0, -1.0]},
        ),
        Call(
            mvou.GaussianSB,
            GSB,
            shapes={"a": "d", "P0": "d d", "b": "d", "P1": "d d"},
            bad={"P0": [-P, torch.tensor([[1.0, 2.0], [0.0, 1.0]], dtype=F64)]},
        ),
        Call(
            mvou.GaussianSB,
            GSB,
            name="GaussianSB.marginal",
            method="marginal",
            call={"t": t},
            bad={"t": [t + 1]},
            accepts=T_ANY_RANK,
        ),
        Call(
            mvou.GaussianSB,
            GSB,
            name="GaussianSB.drift",
            method="drift",
            call={"t": t, "x": x0},
            shapes={"x": "B d", "t": "B"},
            bad={"t": [torch.ones(6, dtype=F64)]},
            accepts=T_ANY_RANK,
        ),
        Call(
            mvou.GaussianSB,
            GSB,
            name="GaussianSB.sample",
            method="sample",
            call={"x0": x0, "t_grid": grid, "steps": 10},
            shapes={"x0": "N d"},
            bad={"steps": [0], "t_grid": [torch.tensor([0.5, 0.2])]},
        ),
        Call(
            mvou.MvOUOTFM,
            OTFM,
            score_weight=1.0,
            coupling="ot",
            coupling_scope="global",
            reg=1.0,
            t_min=1e-3,
            bad={
                "hidden": [0, 10**6],
                "depth": [0],
                "score_weight": [-1.0],
                "reg": [0.0],
                "t_min": [0.5, -0.1],
            },
        ),
        Call(
            mvou.MvOUOTFM,
            OTFM,
            name="MvOUOTFM.fit",
            method="fit",
            call={
                "snapshots": [x0, x1],
                "times": [0.0, 1.0],
                "steps": 2,
                "batch": 8,
                "lr": 1e-3,
                "seed": 0,
                "progress": False,
            },
            bad={
                "steps": [0],
                "batch": [0],
                "lr": [0.0],
                "seed": [-1],
                "times": [[1.0, 0.0], [0.0, 0.5, 1.0]],
                "snapshots": [[x0], [x0, torch.zeros(3, 5, dtype=F64)], "x"],
            },
        ),
        *[
            Call(
                mvou.MvOUOTFM,
                OTFM,
                name=f"MvOUOTFM.{name}",
                method=name,
                prepare=_fit,
                call={"t": t, "x": x0},
                shapes={"x": "B d", "t": "B"},
                bad={"t": [t + 1]},
                accepts=T_ANY_RANK,
            )
            for name in ("velocity", "score", "drift")
        ],
        Call(
            mvou.MvOUOTFM,
            OTFM,
            name="MvOUOTFM.sample",
            method="sample",
            prepare=_fit,
            call={"x0": x0, "t_grid": grid, "sde": True, "steps": 10},
            shapes={"x0": "N d"},
            bad={"steps": [0], "t_grid": [torch.tensor([0.0, 1.5])]},
        ),
        Call(
            mvou.estimate_drift_matrix,
            model=fresh(_fitted),
            x0=x0,
            t_grid=grid,
            shapes={"x0": "N d"},
            bad={"model": ["not a model"]},
        ),
        Call(
            mvou.estimate_drift_matrix,
            name="estimate_drift_matrix (at the snapshots)",
            model=fresh(_fitted),
            x0=x0,
            snapshots=[x0, x1],
            bad={"snapshots": [[x0], "x0"]},
        ),
        Call(
            mvou.fit_iterated,
            snapshots=[x0, x1],
            times=[0.0, 1.0],
            sigma=0.5,
            iterations=1,
            steps=2,
            batch=8,
            progress=False,
            estimate_on="data",
            bad={"iterations": [0], "sigma": [-1.0], "estimate_on": ["cells"]},
        ),
        Call(
            mvou.bures_w2,
            mean1=m,
            cov1=P,
            mean2=-m,
            cov2=2 * P,
            shapes={"mean1": "d", "cov1": "d d", "mean2": "d", "cov2": "d d"},
            bad={"cov1": [-P]},
        ),
        Call(mvou.sample_w2, x=x0, y=x1, shapes={"x": "n d", "y": "k d"}),
        Call(mvou.energy_distance, x=x0, y=x1, shapes={"x": "n d", "y": "k d"}),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
