"""Every public entry point against paperkit's shared bad-input suite (NaN, inf, empty, wrong
rank, mismatched shapes, dtypes, types, and the out-of-range values listed in ``bad``), plus
the refusals the paper's setting needs: a step size <= 0, a non-finite start, a target the model
never attains (empty M), a diagonal net with x = 0."""

import numpy as np
import pytest

import eosgd
from eosgd import LeastSquaresProblem, gd
from paperkit.testing import BadInputs, Call

HUGE = 10**15  # steps whose records would need petabytes


def square(w):
    """f(u, v) = u^2 + v^2: M = {f = y} is empty for y < 0 and a point (grad f = 0) at y = 0."""
    return (w**2).sum(-1)


def square_grad(w):
    return 2 * w


PROB = LeastSquaresProblem.factorization()
PRODUCT = LeastSquaresProblem.product(3)
W_NEAR = np.array([1.2, 0.9])
W_PLUS = eosgd.period_two_orbit(PROB, 1.1)[0]
TRAJ = gd(PROB, np.array([[1.2, 0.9], [0.8, 1.3]]), np.array([0.5, 0.9]), 40, "log")
TRAJ_NOPROJ = gd(PROB, W_NEAR, 0.5, 10, project=False)
CIRCLE = {"f": square, "jacobian": square_grad, "y": 1.0, "dim": 2, "name": "circle", "seed": 0}
ANY_LEAD = {"w": {"rank"}}  # w may carry any leading axes: (..., p)


def method(name, w=W_NEAR, **extra):
    """A Call of ``LeastSquaresProblem.<name>(w)`` on the custom circle problem."""
    call = {"w": w, **extra.pop("call", {})}
    return Call(
        LeastSquaresProblem,
        CIRCLE,
        name=f"LeastSquaresProblem.{name}",
        method=name,
        call=call,
        shapes={"w": "2"},
        accepts={"name": {"choice"}, **extra.pop("accepts", ANY_LEAD)},
        **extra,
    )


SUITE = BadInputs(
    eosgd,
    [
        Call(
            LeastSquaresProblem,
            CIRCLE,
            accepts={"name": {"choice"}},  # a free-text label
            # y <= 0: M = {u^2 + v^2 = y} is empty (or the single point 0, where grad f = 0)
            bad={"y": [-1.0, 0.0], "dim": [1], "f": [None], "jacobian": [square]},
        ),
        method("f"),
        method("grad"),
        method("jacobian"),
        method("residual"),
        method("loss"),
        method("sharpness"),
        # the origin: grad f = 0, no normal to project along
        method("project", w=np.array([0.9, 0.5]), bad={"w": [np.array([0.0, 0.0])]}),
        method("normal", w=np.array([0.6, 0.8])),
        method("distance_to_minimisers"),
        method("tangent_basis", w=np.array([0.6, 0.8]), accepts={}),
        Call(
            LeastSquaresProblem.diagonal_net,
            {"x": np.array([1.0, 0.5]), "y": 1.0},
            name="LeastSquaresProblem.imbalance",
            method="imbalance",
            call={"w": np.array([1.2, 0.9, 0.3, 0.1])},
            shapes={"w": "4"},
            accepts=ANY_LEAD,
        ),
        Call(
            LeastSquaresProblem,
            CIRCLE,
            name="LeastSquaresProblem.min_sharpness",
            method="min_sharpness",
            call={"method": "auto"},
            accepts={"name": {"choice"}},
        ),
        Call(LeastSquaresProblem.factorization, y=1.0, bad={"y": [0.0]}),
        Call(LeastSquaresProblem.product, depth=3, y=2.0, bad={"depth": [1, 10**6], "y": [0.0]}),
        Call(
            LeastSquaresProblem.diagonal_net,
            x=np.array([1.0, 0.5, 2.0]),
            y=1.0,
            bad={"x": [np.zeros(3)], "y": [0.0]},
        ),
        Call(
            LeastSquaresProblem.tanh_net,
            X=np.array([[1.0, 0.0], [0.0, 1.0]]),
            Y=np.array([0.5, -0.5]),
            width=2,
            seed=0,
            shapes={"X": "N d", "Y": "N"},
            accepts={"Y": {"rank"}},  # Y may be (N,) or (N, o)
            bad={"width": [0, 10**6], "seed": [-1], "Y": [np.ones((2, 1, 1))]},
        ),
        Call(
            gd,
            problem=PROB,
            w0=W_NEAR,
            eta=0.5,
            steps=10,
            record_every=2,
            project=True,
            accepts={"w0": {"rank"}},  # one start (p,) or a batch (n, p)
            bad={
                "problem": [object()],
                "w0": [np.ones(3), np.array([1e200, 1e200])],
                "eta": [0.0, -1.0],
                "steps": [0, HUGE],
                "record_every": [0, "linear"],
            },
        ),
        Call(
            gd,
            name="gd-batch",
            problem=PROB,
            w0=np.array([[1.2, 0.9], [0.8, 1.3], [1.0, 1.1]]),
            eta=np.array([0.5, 0.9, 1.1]),
            steps=10,
            shapes={"w0": "n 2", "eta": "n"},
            # one start for every step size, one step size for every start
            accepts={"eta": {"rank"}, "w0": {"rank"}},
            bad={"eta": [np.array([0.5, -1.0, 0.5])]},
        ),
        Call(
            eosgd.record_steps,
            steps=10,
            record_every=3,
            bad={"steps": [0, HUGE], "record_every": [0, "lin"]},
        ),
        Call(eosgd.critical_lr, problem=PRODUCT, bad={"problem": [object()]}),
        Call(
            eosgd.classify_regime,
            problem=PROB,
            eta=0.9,
            rtol=1e-9,
            bad={"eta": [0.0, -1.0], "rtol": [-1e-9, 1.0], "problem": ["factorization"]},
        ),
        Call(eosgd.period_two_orbit, problem=PROB, eta=1.1, bad={"eta": [0.5, 1.0, -2.0]}),
        Call(
            eosgd.period_two_rate,
            problem=PROB,
            eta=1.1,
            w=W_PLUS,
            shapes={"w": "2"},
            bad={"eta": [0.0]},
        ),
        Call(
            eosgd.manifold_start,
            problem=PROB,
            sharpness=2.6,
            offset=1e-6,
            direction=np.array([1.0, -1.0]),
            seed=0,
            shapes={"direction": "2"},
            accepts={"sharpness": {"rank"}},  # one target or a 1-D array of them
            bad={
                "sharpness": [1.0, np.array([2.5, 1.5])],  # below S* = 2
                "direction": [np.array([1.0, 1.0])],  # normal to M at w* = (1, 1)
                "seed": [-1],
            },
        ),
        Call(
            eosgd.fit_power_law,
            t=np.arange(1.0, 101.0),
            v=1.0 / np.sqrt(np.arange(1.0, 101.0)),
            t_min=2.0,
            t_max=100.0,
            shapes={"t": "T", "v": "T"},
            bad={
                "t_min": [0.0, -1.0],
                "t_max": [1.0],  # not above t_min
                "v": [np.full(100, -1.0)],
                "t": [np.zeros(100)],
            },
        ),
        Call(
            eosgd.fit_linear_rate,
            t=np.arange(20.0),
            v=0.5 ** np.arange(20.0),
            shapes={"t": "T", "v": "T"},
            bad={"v": [np.zeros(20)], "t": [np.zeros(20)]},
        ),
        Call(
            eosgd.regime_sweep,
            problem=PROB,
            etas=np.array([0.8, 1.1]),
            w0s=np.array([[1.2, 0.9], [0.8, 1.3]]),
            steps=30,
            record_every="log",
            decades=1.0,
            shapes={"w0s": "m 2"},
            # one start (p,) or several (m, p); an integer record_every is a valid grid
            accepts={"w0s": {"rank"}, "record_every": {"type"}},
            bad={"etas": [np.array([-1.0, 1.0])], "steps": [0, HUGE], "decades": [0.0]},
        ),
        Call(
            eosgd.analyse_trajectory,
            problem=PROB,
            trajectory=TRAJ,
            decades=1.0,
            bad={
                "trajectory": [object(), TRAJ_NOPROJ],
                "problem": [PRODUCT],  # not the problem the run is of
                "decades": [-1.0],
            },
        ),
    ],
    exempt={"Trajectory": "a frozen record that gd returns; users do not build one"},
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()


@pytest.mark.parametrize("eta", [0.0, -0.5])
def test_nonpositive_step_size_is_refused(eta):
    with pytest.raises(ValueError, match="'eta' parameter of gd"):
        gd(PROB, W_NEAR, eta, 10)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_start_is_refused(bad):
    with pytest.raises(ValueError, match="'w0' parameter of gd must be finite"):
        gd(PROB, np.array([1.0, bad]), 0.5, 10)


@pytest.mark.parametrize("y", [-1.0, -1e-3, 0.0])
def test_empty_manifold_is_refused(y):
    """u^2 + v^2 = y has no point for y < 0; at y = 0 its one point has grad f = 0."""
    with pytest.raises(ValueError, match="'y' parameter of LeastSquaresProblem must be a value"):
        LeastSquaresProblem(square, square_grad, y=y, dim=2)


def test_diagonal_net_without_signal_is_refused():
    with pytest.raises(ValueError, match="'x' parameter of LeastSquaresProblem.diagonal_net"):
        LeastSquaresProblem.diagonal_net(np.zeros(4))
