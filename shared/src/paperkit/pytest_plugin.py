"""The pytest plugin every environment with paperkit loads (entry point ``pytest11``).

It imports nothing of :mod:`paperkit.testing`, whose markers read the environment this plugin sets.

- Registers the markers ``slow`` (kept out of the default run), ``gpu`` (needs a CUDA device; run
  by ``nox -s gpu`` and ``ci/gpu-check``) and ``interpret`` (Triton kernels under its CPU
  interpreter).
- Turns the Triton interpreter on (``TRITON_INTERPRET=1``) before test modules are imported, when
  Triton is installed but no CUDA device is visible, so ``@triton.jit`` kernels run on the CPU.
- Skips ``gpu`` tests without a CUDA device and ``interpret`` tests without Triton, with a reason.
- Provides the fixtures ``nan_empty`` and ``one_thread``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest

from paperkit.devices import cuda_available, triton_available

MARKERS = {
    "slow": "longer than the default run allows; deselected unless asked for (-m slow)",
    "gpu": "needs a CUDA device; run by `nox -s gpu` and ci/gpu-check",
    "interpret": "runs a Triton kernel under TRITON_INTERPRET=1 on the CPU",
}


def pytest_configure(config: pytest.Config) -> None:
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")
    if (
        "TRITON_INTERPRET" not in os.environ
        and importlib.util.find_spec("triton") is not None
        and not cuda_available()
    ):
        os.environ["TRITON_INTERPRET"] = "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    needs = {m: any(item.get_closest_marker(m) for item in items) for m in ("gpu", "interpret")}
    no_gpu = needs["gpu"] and not cuda_available()
    no_triton = needs["interpret"] and not triton_available()
    for item in items:
        if no_gpu and item.get_closest_marker("gpu"):
            item.add_marker(pytest.mark.skip(reason="marked gpu: needs a CUDA device"))
        if no_triton and item.get_closest_marker("interpret"):
            item.add_marker(pytest.mark.skip(reason="marked interpret: needs Triton"))


@pytest.fixture
def nan_empty(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make ``torch.empty`` / ``torch.empty_like`` / ``Tensor.new_empty`` return NaN-filled floats.

    Output buffers a kernel forgets to write then show up as NaN instead of passing by luck.
    """
    import torch

    originals = (torch.empty, torch.empty_like, torch.Tensor.new_empty)

    def poison(t: torch.Tensor) -> torch.Tensor:
        if t.is_floating_point() or t.is_complex():
            with torch.no_grad():
                t.fill_(float("nan"))
        return t

    monkeypatch.setattr(torch, "empty", lambda *a, **k: poison(originals[0](*a, **k)))
    monkeypatch.setattr(torch, "empty_like", lambda *a, **k: poison(originals[1](*a, **k)))
    monkeypatch.setattr(
        torch.Tensor, "new_empty", lambda self, *a, **k: poison(originals[2](self, *a, **k))
    )
    yield


@pytest.fixture
def one_thread() -> Iterator[None]:
    """Run the test with one torch intra-op thread (tiny tensors only add contention), and give
    the thread count back afterwards. Without torch it does nothing. A package's conftest can
    make it apply to every test with ``pytestmark = pytest.mark.usefixtures("one_thread")`` or an
    autouse fixture that requests it."""
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
