"""The op convention of kernel packages: one ``backend`` argument, resolved in one place.

``backend="reference"`` is the plain readable path tests compare with; named fast paths sit
beside it (``"chunk"``, ``"scan"``, ``"triton"``, ``"cuda"``, ...); ``backend="auto"`` takes the
first of the package's preference list that can run on the inputs' device::

    name = resolve_backend("zeros_attention", backend, {
        "reference": True,
        "chunk": True,
        "triton": q.is_cuda and triton_available(),
    }, auto=("triton", "chunk"))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from paperkit.checks import check_choice
from paperkit.errors import param_error

__all__ = ["resolve_backend"]


def resolve_backend(
    owner: str, backend: str, available: Mapping[str, bool], *, auto: Sequence[str]
) -> str:
    """The backend to run: ``backend`` itself, or for ``"auto"`` the first of ``auto`` that is
    available (``"reference"`` when none is). A known backend that cannot run here is a
    ``ValueError`` saying so, never a silent fall-back.

    >>> resolve_backend("f", "auto", {"reference": True, "triton": False}, auto=("triton",))
    'reference'
    """
    check_choice("backend", owner, backend, ("auto", *available))
    if backend == "auto":
        return next((b for b in auto if available.get(b)), "reference")
    if not available[backend]:
        raise param_error(
            "backend",
            owner,
            f"a backend that can run here ({', '.join(b for b, ok in available.items() if ok)})",
            backend,
        )
    return backend
