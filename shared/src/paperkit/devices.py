"""Which compute backends this machine can run: CUDA through torch, CuPy, Triton.

Nothing here imports torch, CuPy or Triton at module import time, so every package imports on a
machine without them; each check imports lazily and answers ``False`` instead of raising.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import TYPE_CHECKING

from paperkit.errors import param_error

if TYPE_CHECKING:
    import torch

__all__ = [
    "cuda_available",
    "cupy_available",
    "pick_device",
    "torch_available",
    "triton_available",
    "triton_interpret",
]


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def torch_available() -> bool:
    """Whether torch can be imported."""
    return _importable("torch")


def cuda_available() -> bool:
    """Whether torch is installed and sees at least one CUDA device."""
    if not torch_available():
        return False
    import torch

    return bool(torch.cuda.is_available())


def cupy_available() -> bool:
    """Whether CuPy is installed *and* a CUDA device is visible to it."""
    if not _importable("cupy"):
        return False
    import cupy

    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # CUDARuntimeError without a driver; its class moves between versions
        return False


def triton_interpret() -> bool:
    """Whether Triton runs kernels in its CPU interpreter (``TRITON_INTERPRET=1``)."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def triton_available() -> bool:
    """Whether Triton kernels can run here: Triton installed, and a CUDA GPU or the interpreter."""
    if importlib.util.find_spec("triton") is None or not _importable("triton"):
        return False
    return triton_interpret() or cuda_available()


def pick_device(device: str | None = None) -> torch.device:
    """Resolve a torch device.

    ``None`` or ``"auto"`` picks ``$PAPERKIT_DEVICE`` when set, else ``cuda`` when available,
    else ``cpu``. Asking for ``cuda`` on a machine without one is an error, not a silent fallback.
    """
    import torch

    if device is None or device == "auto":
        device = os.environ.get("PAPERKIT_DEVICE") or ("cuda" if cuda_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError):
        raise param_error(
            "device", "pick_device", "'auto', 'cpu', 'cuda' or 'cuda:N'", device
        ) from None
    if resolved.type == "cuda" and not cuda_available():
        raise RuntimeError(
            f"Device {device!r} was requested but torch sees no CUDA device; use 'cpu' or 'auto'."
        )
    return resolved
