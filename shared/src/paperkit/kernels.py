"""Loading CUDA C++ kernels shipped as package data, and torch <-> CuPy zero-copy.

A package keeps its kernels in ``src/<pkg>/kernels/*.cu`` (self-contained: CUDA headers only, the
functions ``extern "C"``), and loads them lazily the first time a GPU path runs::

    module = load_cuda_module("zeros", "kernels/scan.cu")
    kernel = module.get_function("scan_forward")
    with on_torch_stream():
        kernel(grid, block, (to_cupy(x), to_cupy(y), n))

Compiled modules are cached per (source, options), so a second call costs a dict lookup.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.resources
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from paperkit.devices import cupy_available

if TYPE_CHECKING:
    from importlib.abc import Traversable

__all__ = [
    "clear_kernel_cache",
    "kernel_path",
    "kernel_source",
    "load_cuda_module",
    "on_torch_stream",
    "require_cupy",
    "to_cupy",
    "to_torch",
]


def kernel_path(package: str, relpath: str) -> Traversable:
    """The location of a kernel source file inside an installed package.

    Raises:
        ModuleNotFoundError: the package cannot be imported.
        FileNotFoundError: the package has no such file.
    """
    path = importlib.resources.files(package).joinpath(relpath)
    if not path.is_file():
        raise FileNotFoundError(
            f"Kernel source {relpath!r} not found in package {package!r} (looked for {path})."
        )
    return path


def kernel_source(package: str, relpath: str) -> str:
    """The text of a kernel source file shipped in ``package``."""
    return kernel_path(package, relpath).read_text(encoding="utf-8")


def require_cupy(package: str | None = None) -> Any:
    """Import CuPy, or explain precisely why a GPU kernel cannot run here.

    Raises:
        ImportError: CuPy is not installed (names the extra that installs it).
        RuntimeError: CuPy is installed but no CUDA device is visible.
    """
    try:
        cupy = importlib.import_module("cupy")
    except ImportError:
        extra = f"pip install '{package}[cuda]'" if package else "pip install cupy-cuda13x"
        raise ImportError(
            f"CuPy is needed for this CUDA kernel but is not installed ({extra}); "
            "on a machine without a GPU use backend='reference'."
        ) from None
    if not cupy_available():
        raise RuntimeError(
            "CuPy is installed but sees no CUDA device; on a machine without a GPU use "
            "backend='reference'."
        )
    return cupy


@functools.cache
def _compile(source: str, options: tuple[str, ...], name_expressions: tuple[str, ...] | None):
    cupy = importlib.import_module("cupy")
    return cupy.RawModule(code=source, options=options, name_expressions=name_expressions)


def load_cuda_module(
    package: str,
    relpath: str,
    *,
    options: Sequence[str] = ("--std=c++17",),
    name_expressions: Sequence[str] | None = None,
) -> Any:
    """Compile (once) and return the ``cupy.RawModule`` for a ``.cu`` file shipped in ``package``.

    Args:
        package: import name of the package holding the file, e.g. ``"zeros"``.
        relpath: path inside the package, e.g. ``"kernels/scan.cu"``.
        options: NVRTC options.
        name_expressions: template instantiations to compile, for templated kernels.

    The source is resolved before CuPy is asked for, so a wrong path is reported as such on any
    machine; then a missing CuPy or GPU raises :func:`require_cupy`'s errors.
    """
    source = kernel_source(package, relpath)
    require_cupy(package)
    names = tuple(name_expressions) if name_expressions is not None else None
    return _compile(source, tuple(options), names)


def clear_kernel_cache() -> None:
    """Forget every compiled module (the next load compiles again)."""
    _compile.cache_clear()


def to_cupy(tensor: Any) -> Any:
    """View a CUDA torch tensor as a CuPy array without copying (DLPack)."""
    import torch

    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"to_cupy expects a torch.Tensor. Got {type(tensor).__name__} instead.")
    if tensor.device.type != "cuda":
        raise ValueError(
            f"to_cupy needs a CUDA tensor; got a tensor on {tensor.device}. "
            "Move it with .cuda() or use the reference backend."
        )
    cupy = require_cupy()
    return cupy.from_dlpack(tensor.detach())


def to_torch(array: Any) -> Any:
    """View a CuPy array as a torch tensor without copying (DLPack)."""
    import torch

    if not hasattr(array, "__dlpack__"):
        raise TypeError(
            f"to_torch expects an array with __dlpack__. Got {type(array).__name__} instead."
        )
    return torch.from_dlpack(array)


@contextlib.contextmanager
def on_torch_stream() -> Iterator[Any]:
    """Run CuPy launches on torch's current CUDA stream, so they order with torch's own work."""
    import torch

    cupy = require_cupy()
    stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    with stream:
        yield stream
