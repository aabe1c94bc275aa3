"""What every package's tests need, written once.

- :func:`assert_close`: an honest closeness check (relative error with an absolute floor; both
  tolerances must be stated by the caller, nothing is loosened by dtype behind their back).
- :func:`gradcheck64`: ``torch.autograd.gradcheck`` in float64.
- Markers :data:`requires_cuda`, :data:`requires_cupy`, :data:`requires_triton`.
- The fixture ``nan_empty`` (from the pytest plugin :mod:`paperkit.pytest_plugin`): fills
  ``torch.empty`` with NaN, so a kernel that reads memory it never wrote fails.
- A small contract suite: :func:`check_seeded_determinism`, :func:`check_dtype_device`,
  :func:`check_finite`, :func:`check_state_dict_roundtrip`, :func:`assert_param_error`.
- :func:`run_readme_example`: executes the one python block of a README's "## Usage" section.
- The shared bad-input suite: :class:`BadInputs`, :class:`Call`, :func:`fresh`
  (:mod:`paperkit.testing.badinputs`).
- :func:`check_results_file`: a ``results.json`` / ``bench.json`` follows paperkit's schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from paperkit.devices import cuda_available, cupy_available, triton_available
from paperkit.errors import PARAM_ERROR_PATTERN
from paperkit.seeding import seed_everything
from paperkit.testing.badinputs import BadCase, BadInputs, Call, fresh, run_case

__all__ = [
    "BadCase",
    "BadInputs",
    "Call",
    "assert_close",
    "assert_param_error",
    "check_dtype_device",
    "check_finite",
    "check_results_file",
    "check_seeded_determinism",
    "check_state_dict_roundtrip",
    "gradcheck64",
    "requires_cuda",
    "requires_cupy",
    "requires_triton",
    "fresh",
    "run_case",
    "run_readme_example",
]

requires_cuda = pytest.mark.skipif(not cuda_available(), reason="needs a CUDA device")
requires_cupy = pytest.mark.skipif(not cupy_available(), reason="needs CuPy and a CUDA device")
requires_triton = pytest.mark.skipif(
    not triton_available(), reason="needs Triton with a CUDA device or TRITON_INTERPRET=1"
)


def _to_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu()
        if x.is_complex():
            return x.resolve_conj().numpy().astype(np.complex128)
        return x.double().numpy() if x.is_floating_point() else x.numpy()
    return np.asarray(x)


def assert_close(actual: Any, expected: Any, *, rtol: float, atol: float, msg: str = "") -> None:
    """Assert ``|actual - expected| <= atol + rtol * |expected|`` element-wise.

    Works on torch tensors, numpy arrays and scalars (compared in float64). Shapes must match
    exactly (no broadcasting); NaN must sit at the same places in both. The failure message names
    the worst element, its absolute and relative error.
    """
    if rtol < 0 or atol < 0:
        raise ValueError(f"rtol and atol must be non-negative. Got rtol={rtol}, atol={atol}.")
    a, e = _to_numpy(actual), _to_numpy(expected)
    prefix = f"{msg}: " if msg else ""
    if a.shape != e.shape:
        raise AssertionError(f"{prefix}shape {a.shape} != expected shape {e.shape}")
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    if not np.array_equal(nan_a, nan_e):
        raise AssertionError(f"{prefix}NaN at different places ({nan_a.sum()} vs {nan_e.sum()})")
    a, e = np.where(nan_a, 0, a), np.where(nan_e, 0, e)
    with np.errstate(invalid="ignore"):
        err = np.abs(a - e)
        bad = ~(err <= atol + rtol * np.abs(e))
    if bad.any():
        idx = np.unravel_index(np.argmax(np.where(bad, err, -1)), err.shape) if err.ndim else ()
        rel = err[idx] / max(float(np.abs(e[idx])), np.finfo(float).tiny)
        raise AssertionError(
            f"{prefix}{int(bad.sum())} of {bad.size} elements differ beyond atol={atol}, "
            f"rtol={rtol}; worst at {tuple(int(i) for i in idx)}: actual {a[idx]!r}, expected "
            f"{e[idx]!r} (abs err {err[idx]:.3g}, rel err {rel:.3g}); "
            f"max abs err {np.nanmax(err):.3g}"
        )


def gradcheck64(
    fn: Callable[..., Any],
    *inputs: Any,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    **kwargs: Any,
) -> bool:
    """``torch.autograd.gradcheck`` with every floating tensor input cast to float64.

    Floating inputs become float64 leaves with ``requires_grad``; other inputs pass unchanged.
    Raises on a mismatch between the analytical and numerical Jacobians.
    """
    import torch

    cast = tuple(
        x.detach().to(torch.float64).requires_grad_(True)
        if isinstance(x, torch.Tensor) and x.is_floating_point()
        else x
        for x in inputs
    )
    return torch.autograd.gradcheck(fn, cast, eps=eps, atol=atol, rtol=rtol, **kwargs)


def check_finite(output: Any) -> None:
    """Assert every element (of a tensor, array, or tuple of them) is finite."""
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    for i, out in enumerate(outputs):
        values = _to_numpy(out)
        if not np.isfinite(values).all():
            raise AssertionError(f"output {i} has {int((~np.isfinite(values)).sum())} non-finite")


def check_seeded_determinism(run: Callable[[], Any], *, seed: int = 0) -> None:
    """Assert ``run()`` gives bit-identical results twice under the same seed.

    ``run`` should build everything it needs (model, data) so the seed governs all of it.
    """
    seed_everything(seed)
    first = run()
    seed_everything(seed)
    second = run()
    firsts = first if isinstance(first, (tuple, list)) else (first,)
    seconds = second if isinstance(second, (tuple, list)) else (second,)
    assert len(firsts) == len(seconds), "run() returned a different number of outputs"
    for i, (a, b) in enumerate(zip(firsts, seconds, strict=True)):
        if not np.array_equal(_to_numpy(a), _to_numpy(b), equal_nan=True):
            raise AssertionError(f"output {i} differs between two runs with seed {seed}")


def check_dtype_device(module: Callable[..., Any], x: Any) -> Any:
    """Assert ``module(x)`` keeps ``x``'s dtype and device; return the output."""
    out = module(x)
    assert out.dtype == x.dtype, f"dtype {x.dtype} in, {out.dtype} out"
    assert out.device == x.device, f"device {x.device} in, {out.device} out"
    return out


def check_state_dict_roundtrip(make: Callable[[], Any], x: Any) -> None:
    """Assert a freshly built module loading another's ``state_dict`` computes the same output.

    ``make()`` builds the module; the two builds are seeded differently, so the check fails when
    some state is not saved (a buffer that should be persistent, a parameter outside the dict).
    """
    import torch

    seed_everything(1)
    source = make().eval()
    seed_everything(2)
    target = make().eval()
    target.load_state_dict(source.state_dict())
    with torch.no_grad():
        a, b = source(x), target(x)
    if not torch.equal(a, b):
        raise AssertionError("outputs differ after load_state_dict(state_dict())")


def assert_param_error(
    fn: Callable[..., Any],
    *args: Any,
    param: str,
    exc: type[Exception] = ValueError,
    **kwargs: Any,
) -> Exception:
    """Assert ``fn(*args, **kwargs)`` raises ``exc`` worded as :func:`paperkit.errors.param_error`
    for the argument ``param``; return the exception."""
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    match = PARAM_ERROR_PATTERN.match(str(info.value))
    if match is None or match["param"] != param:
        raise AssertionError(
            f"expected the worded error for parameter {param!r}, got: {info.value}"
        )
    return info.value


def run_readme_example(readme: str | Path, section: str = "## Usage") -> dict[str, Any]:
    """Execute the single ```python block of ``section`` in a README; return its namespace.

    The example asserts its own claims; the caller can check the names it defines. Fails when the
    section is missing or holds no python block, or more than one.
    """
    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    if section not in text:
        raise AssertionError(f"{path} has no {section!r} section")
    body = text.split(section, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", body, re.DOTALL)
    if len(blocks) != 1:
        raise AssertionError(f"{section!r} of {path} holds {len(blocks)} python blocks, not 1")
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(blocks[0], str(path), "exec"), namespace)
    return namespace


def check_results_file(path: str | Path) -> dict[str, Any]:
    """Load a ``results.json`` or ``bench.json`` and validate it against paperkit's schema."""
    import json

    from paperkit.results import validate

    data = json.loads(Path(path).read_text())
    validate(data)
    return data
