"""The bad-input suite fails for each way a package can mishandle bad input, and passes for a
function that checks its arguments."""

import types

import numpy as np
import pytest

from paperkit import check_array, check_choice, check_int, check_real
from paperkit.testing import BadInputs, Call, fresh, run_case


def scale_rows(x, y, *, k=2, alpha=0.5, mode="sum", flag=False):
    """Checks everything: the suite must pass."""
    dims = {}
    x = check_array("x", "scale_rows", x, shape=("n", "d"), dims=dims)
    y = check_array("y", "scale_rows", y, shape=("n",), dims=dims)
    check_int("k", "scale_rows", k, low=1, high=10)
    check_real("alpha", "scale_rows", alpha, low=0, high=1)
    check_choice("mode", "scale_rows", mode, ("sum", "mean"))
    if not isinstance(flag, bool):
        raise TypeError(f"The 'flag' parameter of scale_rows must be True or False. Got {flag!r}.")
    return x * y[:, None] * alpha * k


def unchecked(x, y, *, k=2):
    """Checks nothing: NaN passes silently, mismatches fail inside numpy."""
    return x * y[:, None] * k


def misnamed(x, *, k=2):
    """Checks with the wrong name."""
    check_int("count", "misnamed", k, low=1)
    return check_array("x", "misnamed", x) * k


class Model:
    def __init__(self, width: int = 3):
        self.width = check_int("width", "Model", width, low=1)

    def __call__(self, x):
        return check_array("x", "Model.__call__", x, shape=(None, self.width)).sum(1)


X, Y = np.ones((4, 3)), np.arange(4.0)
MODULE = types.SimpleNamespace(
    __name__="toy",
    __all__=["scale_rows", "unchecked", "Model", "CONSTANT", "forgotten"],
    scale_rows=scale_rows,
    unchecked=unchecked,
    Model=Model,
    CONSTANT=3,
    forgotten=lambda z: z,
)


def _suite(*calls, **kw):
    return BadInputs(MODULE, list(calls), **kw)


def _outcomes(suite):
    out = {}
    for case in suite.cases():
        try:
            run_case(case)
            out[case.id] = "ok"
        except AssertionError as exc:
            out[case.id] = str(exc)
    return out


def test_a_checked_function_passes_every_derived_case():
    call = Call(
        scale_rows,
        x=X,
        y=Y,
        k=2,
        alpha=0.5,
        mode="sum",
        flag=False,
        shapes={"x": "n d", "y": "n"},
        bad={"k": [0, 11], "alpha": [-0.1, 2.0]},
    )
    outcomes = _outcomes(_suite(call))
    failed = {k: v for k, v in outcomes.items() if v != "ok"}
    assert not failed, failed
    kinds = {i.split("-", 2)[-1] for i in outcomes}
    assert {
        "nan",
        "inf",
        "empty",
        "rank",
        "shape",
        "type",
        "fraction",
        "nonfinite",
        "choice",
        "bad",
        "bad2",
        "dtype",
        "valid",
    } <= kinds


def test_silent_and_deep_failures_are_caught():
    outcomes = _outcomes(_suite(Call(unchecked, x=X, y=Y, k=2, shapes={"x": "n d", "y": "n"})))
    assert "returned silently" in outcomes["unchecked-x-nan"]
    assert "without naming 'y'" in outcomes["unchecked-y-shape"]  # numpy's broadcast error
    assert "without naming 'k'" in outcomes["unchecked-k-type"]  # numpy's UFuncTypeError
    assert outcomes["unchecked-valid"] == "ok"


def test_an_error_naming_another_argument_fails():
    outcomes = _outcomes(_suite(Call(misnamed, x=X, k=2, bad={"k": [0]})))
    assert "without naming 'k'" in outcomes["misnamed-k-bad"]
    assert outcomes["misnamed-x-nan"] == "ok"


def test_accepts_lets_a_documented_design_through():
    call = Call(unchecked, x=X, y=Y, k=2, accepts={"x": {"nan", "inf"}})
    outcomes = _outcomes(_suite(call))
    assert outcomes["unchecked-x-nan"] == "ok" and outcomes["unchecked-x-inf"] == "ok"


def test_classes_are_checked_at_construction_and_call():
    call = Call(Model, width=3, call={"x": fresh(lambda: np.ones((2, 3)))}, bad={"width": [0]})
    outcomes = _outcomes(_suite(call))
    assert outcomes["Model-init-width-bad"] == "ok" and outcomes["Model-call-x-nan"] == "ok"
    assert outcomes["Model-call-x-rank"] == "ok"


def test_coverage_names_what_is_missing_and_stale_exemptions():
    suite = _suite(Call(scale_rows, x=X, y=Y), exempt={"Model": "covered elsewhere"})
    assert suite.uncovered() == ["unchecked", "forgotten"]
    with pytest.raises(AssertionError, match="add a Call"):
        suite.coverage_test()()
    stale = _suite(
        Call(scale_rows, x=X, y=Y),
        Call(unchecked, x=X, y=Y),
        Call(Model, width=3),
        exempt={"forgotten": "takes anything", "gone": "no longer public"},
    )
    with pytest.raises(AssertionError, match="exempt names not in __all__"):
        stale.coverage_test()()


def test_declarations_are_checked():
    with pytest.raises(ValueError, match="not arguments"):
        Call(scale_rows, x=X, y=Y, shapes={"z": "n"})
    with pytest.raises(ValueError, match="needs a reason"):
        BadInputs(MODULE, [], exempt={"forgotten": ""})


def test_torch_tensors_get_the_same_cases():
    torch = pytest.importorskip("torch")
    from paperkit import check_tensor

    def attn(q, k):
        dims = {}
        check_tensor("q", "attn", q, shape=("B", "T", "d"), dims=dims)
        check_tensor("k", "attn", k, shape=("B", "T", "d"), dims=dims)
        return q @ k.transpose(-1, -2)

    module = types.SimpleNamespace(__name__="t", __all__=["attn"], attn=attn)
    q = torch.randn(2, 3, 4)
    suite = BadInputs(module, [Call(attn, q=q, k=q.clone(), shapes={"q": "B T d", "k": "B T d"})])
    outcomes = _outcomes(suite)
    # float64 q times float32 k fails inside torch: the suite says so
    assert "from inside" in outcomes["attn-q-dtype"]
    assert all(v == "ok" for k, v in outcomes.items() if "dtype" not in k), outcomes
    assert sum(i.startswith("attn-k-shape") for i in outcomes) == 3


def test_nan_reaches_non_contiguous_inputs_and_reserved_names_can_be_passed():
    torch = pytest.importorskip("torch")
    from paperkit import check_tensor

    def attend(x, name):
        check_tensor("x", "attend", x)
        return x.sum()

    module = types.SimpleNamespace(__name__="t", __all__=["attend"], attend=attend)
    x = torch.randn(3, 4).t()  # a permuted view: reshape(-1) would copy it
    assert not x.is_contiguous()
    outcomes = _outcomes(BadInputs(module, [Call(attend, {"x": x, "name": "a"})]))
    assert outcomes["attend-x-nan"] == "ok" and outcomes["attend-x-inf"] == "ok"
    assert "attend-name-choice" in outcomes
