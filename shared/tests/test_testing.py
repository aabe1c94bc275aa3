import numpy as np
import pytest
import torch

from paperkit.errors import param_error
from paperkit.testing import (
    assert_close,
    assert_param_error,
    check_dtype_device,
    check_finite,
    check_seeded_determinism,
    check_state_dict_roundtrip,
    gradcheck64,
)


def test_assert_close_passes_within_and_fails_beyond_tolerance():
    assert_close(torch.tensor([1.0, 2.0]), np.array([1.0, 2.0 + 1e-7]), rtol=1e-6, atol=0)
    with pytest.raises(AssertionError, match=r"1 of 2 elements differ.*worst at \(1,\)"):
        assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1]), rtol=1e-3, atol=1e-3)
    # the absolute floor lets values near zero pass, the relative part does not help there
    assert_close(np.array([1e-9]), np.array([0.0]), rtol=0, atol=1e-8)
    with pytest.raises(AssertionError):
        assert_close(np.array([1e-9]), np.array([0.0]), rtol=0.5, atol=0)


def test_assert_close_checks_shape_and_nan_positions():
    with pytest.raises(AssertionError, match="shape"):
        assert_close(np.zeros(3), np.zeros((3, 1)), rtol=0, atol=1)
    with pytest.raises(AssertionError, match="NaN at different places"):
        assert_close(np.array([np.nan, 1.0]), np.array([1.0, 1.0]), rtol=1, atol=1)
    assert_close(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), rtol=0, atol=0)
    with pytest.raises(ValueError, match="non-negative"):
        assert_close(1.0, 1.0, rtol=-1, atol=0)
    assert_close(torch.tensor(1.0, dtype=torch.bfloat16), 1.0, rtol=0, atol=0)


def test_gradcheck64_accepts_a_correct_gradient_and_catches_a_wrong_one():
    x = torch.randn(4)
    assert gradcheck64(lambda t: (t**3).sum(), x)

    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t**2

        @staticmethod
        def backward(ctx, grad):
            (t,) = ctx.saved_tensors
            return grad * t  # should be 2 t

    with pytest.raises(Exception, match="Jacobian mismatch"):
        gradcheck64(Wrong.apply, x)


def test_check_finite():
    check_finite((torch.ones(2), np.zeros(3)))
    with pytest.raises(AssertionError, match="output 1 has 1 non-finite"):
        check_finite([torch.ones(2), torch.tensor([0.0, float("inf")])])


def test_check_seeded_determinism():
    check_seeded_determinism(lambda: torch.nn.Linear(3, 2)(torch.randn(4, 3)))
    counter = iter(range(10))
    with pytest.raises(AssertionError, match="differs between two runs"):
        check_seeded_determinism(lambda: torch.tensor(float(next(counter))))


def test_check_dtype_device():
    x = torch.randn(2, 3, dtype=torch.float64)
    check_dtype_device(torch.nn.Linear(3, 3).double(), x)
    with pytest.raises(AssertionError, match="dtype"):
        check_dtype_device(lambda t: t.float(), x)


def test_check_state_dict_roundtrip_catches_unsaved_state():
    x = torch.randn(2, 3)
    check_state_dict_roundtrip(lambda: torch.nn.Linear(3, 2), x)

    class Unsaved(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("w", torch.randn(3), persistent=False)

        def forward(self, t):
            return t * self.w

    with pytest.raises(AssertionError, match="outputs differ"):
        check_state_dict_roundtrip(Unsaved, x)


def test_assert_param_error():
    def f(chunk_size):
        if chunk_size % 2:
            raise param_error("chunk_size", "f", "even", chunk_size)
        if chunk_size > 100:
            raise ValueError("too big")

    assert "Got 3 instead" in str(assert_param_error(f, 3, param="chunk_size"))
    with pytest.raises(AssertionError, match="expected the worded error"):
        assert_param_error(f, 102, param="chunk_size")
    with pytest.raises(AssertionError, match="expected the worded error"):
        assert_param_error(f, 3, param="other")


def test_nan_empty_poisons_uninitialised_floats(nan_empty):
    assert torch.isnan(torch.empty(3)).all()
    assert torch.isnan(torch.empty_like(torch.ones(2))).all()
    assert torch.isnan(torch.ones(2).new_empty(4)).all()
    assert torch.empty(2, dtype=torch.int64).shape == (2,)  # integers are left alone


def test_plugin_registers_markers(pytestconfig):
    markers = "\n".join(pytestconfig.getini("markers"))
    for name in ("slow:", "gpu:", "interpret:"):
        assert name in markers


def test_run_readme_example(tmp_path):
    from paperkit.testing import run_readme_example

    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n## Usage\n\n```python\ny = 2 + 3\nassert y == 5\n```\n\n## API\n")
    assert run_readme_example(readme)["y"] == 5
    readme.write_text("## Usage\n\n```python\nassert 1 == 2\n```\n")
    with pytest.raises(AssertionError):
        run_readme_example(readme)
    readme.write_text("## Usage\n\nno code\n\n## API\n\n```python\nx = 1\n```\n")
    with pytest.raises(AssertionError, match="holds 0 python blocks"):
        run_readme_example(readme)
    with pytest.raises(AssertionError, match="no '## Install' section"):
        run_readme_example(readme, "## Install")
