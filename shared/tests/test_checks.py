import math

import numpy as np
import pytest

from paperkit.checks import (
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
)
from paperkit.errors import PARAM_ERROR_PATTERN


def _worded(exc_info, param):
    match = PARAM_ERROR_PATTERN.match(str(exc_info.value))
    assert match is not None and match["param"] == param, str(exc_info.value)
    return str(exc_info.value)


def test_check_int():
    assert check_int("n", "f", np.int64(3), low=1) == 3
    with pytest.raises(ValueError) as info:
        check_int("n", "f", 0, low=1, high=4)
    assert _worded(info, "n").endswith("must be an integer in [1, 4]. Got 0 instead.")
    for bad in (1.5, "3", True, None, np.float32(2)):
        with pytest.raises(TypeError) as info:
            check_int("n", "f", bad, low=1)
        _worded(info, "n")


def test_check_real():
    assert check_real("x", "f", 2) == 2.0
    assert check_real("x", "f", math.inf, finite=False) == math.inf
    with pytest.raises(ValueError, match=r"in \(0, 1\]\. Got 0\.0 instead"):
        check_real("x", "f", 0.0, low=0, high=1, low_open=True)
    with pytest.raises(ValueError, match=r"in \[0, 1\)\. Got 1\.0 instead"):
        check_real("x", "f", 1.0, low=0, high=1, high_open=True)
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError) as info:
            check_real("x", "f", bad)
        _worded(info, "x")
    with pytest.raises(ValueError):
        check_real("x", "f", math.nan, finite=False)
    for bad in ("1", True, [1.0], None):
        with pytest.raises(TypeError):
            check_real("x", "f", bad)


def test_check_bool_and_choice():
    assert check_bool("flag", "f", np.bool_(True)) is True
    for bad in (1, "yes", None):
        with pytest.raises(TypeError):
            check_bool("flag", "f", bad)
    assert check_choice("backend", "f", "scan", ("reference", "scan")) == "scan"
    with pytest.raises(ValueError, match=r"one of 'reference', 'scan'\. Got 'fast' instead"):
        check_choice("backend", "f", "fast", ("reference", "scan"))
    with pytest.raises(ValueError, match="Got a list instead"):
        check_choice("backend", "f", ["unhashable"], ("reference",))


def test_check_array_shapes_kinds_and_values():
    dims = {}
    x = check_array("x", "f", [[1.0, 2.0], [3.0, 4.0]], shape=("n", 2), dims=dims)
    assert x.shape == (2, 2) and dims == {"n": (2, "x")}
    with pytest.raises(ValueError, match=r"with n=2 \(as in x\)"):
        check_array("y", "f", np.zeros(3), shape=("n",), dims=dims)
    with pytest.raises(ValueError, match="with 2 fixed"):
        check_array("z", "f", np.zeros((2, 3)), shape=("n", 2))
    with pytest.raises(ValueError, match="must be 1-D or 2-D"):
        check_array("z", "f", np.zeros((1, 1, 1)), ndim=(1, 2))
    with pytest.raises(ValueError, match="finite"):
        check_array("z", "f", [1.0, np.nan])
    with pytest.raises(ValueError, match="non-empty"):
        check_array("z", "f", [])
    with pytest.raises(TypeError, match="real numbers"):
        check_array("z", "f", np.array([True]))
    with pytest.raises(TypeError, match="must be an array"):
        check_array("z", "f", "abc")
    assert check_array("z", "f", [np.nan], finite=False).size == 1


def test_check_tensor():
    torch = pytest.importorskip("torch")
    dims = {}
    q = torch.randn(2, 5, 3)
    check_tensor("q", "attn", q, shape=("B", "T", "d"), dims=dims)
    with pytest.raises(ValueError) as info:
        check_tensor("k", "attn", torch.randn(2, 6, 3), shape=("B", "T", "d"), dims=dims)
    assert "with T=5 (as in q)" in _worded(info, "k")
    with pytest.raises(TypeError, match="a floating-point tensor"):
        check_tensor("q", "attn", q.long())
    with pytest.raises(TypeError, match="an integer tensor"):
        check_tensor("ids", "attn", q, dtype="int")
    with pytest.raises(TypeError, match="torch.float64"):
        check_tensor("q", "attn", q, dtype=torch.float64)
    with pytest.raises(TypeError, match="a torch.Tensor"):
        check_tensor("q", "attn", q.numpy())
    with pytest.raises(ValueError, match="finite"):
        check_tensor("q", "attn", torch.tensor([1.0, float("inf")]))
    with pytest.raises(ValueError, match="non-empty"):
        check_tensor("q", "attn", torch.zeros(0, 3))
    with pytest.raises(ValueError, match="on device meta"):
        check_tensor("q", "attn", q, device="meta")
    assert check_tensor("q", "attn", torch.zeros(0), nonempty=False).numel() == 0
    assert "shape (2, 5, 3)" in describe(q)


def test_check_memory(monkeypatch):
    monkeypatch.setenv("PAPERKIT_MAX_BYTES", str(2**30))
    assert check_memory("grid", "f", 10, 2**29) == 10
    with pytest.raises(ValueError) as info:
        check_memory("grid", "f", 10**9, 4 * 2**30)
    assert "needs 4 GiB, the limit is 1 GiB" in _worded(info, "grid")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_finite_check_is_exact_when_the_sum_overflows(dtype):
    """The finite test reads a sum first: finite values whose sum overflows pass, and one NaN or
    inf anywhere (also +inf next to -inf, whose sum is NaN) is refused, for arrays and tensors."""
    torch = pytest.importorskip("torch")
    t_dtype = getattr(torch, dtype)
    big = torch.finfo(t_dtype).max
    values = [torch.full((64,), big, dtype=t_dtype)]
    if dtype != "bfloat16":  # numpy has no bfloat16
        values.append(values[0].numpy())
    for value in values:
        check = check_tensor if isinstance(value, torch.Tensor) else check_array
        assert check("x", "f", value) is not None
        for bad in (math.nan, math.inf, -math.inf):
            broken = value.clone() if isinstance(value, torch.Tensor) else value.copy()
            broken[17] = bad
            with pytest.raises(ValueError, match="finite"):
                check("x", "f", broken)
        pair = torch.tensor([math.inf, -math.inf], dtype=t_dtype)
        with pytest.raises(ValueError, match="finite"):
            check("x", "f", pair if check is check_tensor else pair.numpy())
