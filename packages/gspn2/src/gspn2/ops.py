r"""Generalized spatial propagation: the stability normalisation, the line scan in four
directions, and the dense affinity it is equivalent to.

One left-to-right scan over the columns i = 0..W-1 of ``x`` (B, C, H, W), per channel c and row r:

.. math::

    h[c, r, i] = \lambda[c, r, i]\, x[c, r, i] + w^-[g, r, i]\, h[c, r-1, i-1]
               + w^0[g, r, i]\, h[c, r, i-1] + w^+[g, r, i]\, h[c, r+1, i-1],

out-of-range neighbours and :math:`h[\cdot, \cdot, -1]` being 0, and g = c // (C / G) the weight
group of channel c: G = C is GSPN-1's per-channel propagation, G = 1 GSPN-2's channel-shared one.
With ``chunk=k`` the recurrence restarts (h = 0) at every column i with i % k == 0 (k-wide local
windows). The weights live at the destination pixel, in the input's orientation, for every
direction: ``"lr"`` (→), ``"rl"`` (←), ``"tb"`` (↓, the scan runs over the rows and the three
neighbours are columns c-1, c, c+1), ``"bt"`` (↑).

Backends (``backend=``):

- ``"reference"``: a per-pixel Python loop, the definition (:mod:`gspn2.reference`);
- ``"scan"``: a loop over the lines vectorised over B, C and the pixels of a line, with the adjoint
  scan as its backward pass (:mod:`gspn2.scan`);
- ``"cuda"``: the fused GSPN-2 kernels, one launch per direction set (:mod:`gspn2.kernels.fused`);
- ``"cuda_multilaunch"``: the GSPN-1 baseline, one launch per line
  (:mod:`gspn2.kernels.multilaunch`);
- ``"auto"``: ``"cuda"`` for CUDA tensors of a kernel dtype when CuPy sees a GPU, else ``"scan"``.

The CUDA kernels take float32, float16 or bfloat16 (fp32 accumulation) and copy their inputs into
the line layout (:mod:`gspn2.layout`), so non-contiguous inputs are accepted.

Inputs: every public op refuses NaN and inf (``ValueError``), on every backend, and casts its
other floating inputs to the dtype of its first tensor argument (``x``, ``raw_m``, ``w_m``).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from types import ModuleType
from typing import Any, Literal

import torch

from gspn2.layout import scan_directions
from gspn2.reference import scan_reference
from paperkit import (
    check_choice,
    check_int,
    check_memory,
    check_tensor,
    cupy_available,
    describe,
    param_error,
    resolve_backend,
)

__all__ = [
    "BACKENDS",
    "DIRECTIONS",
    "backend_module",
    "check_chunk",
    "four_directions",
    "gspn_4dir",
    "gspn_affinity",
    "gspn_scan",
    "normalize_weights",
    "resolve",
    "stable_weights",
]

#: The four scan directions: → (left to right), ←, ↓ (top to bottom), ↑.
DIRECTIONS = ("lr", "rl", "tb", "bt")
#: The named backends; ``"auto"`` picks one of them.
BACKENDS = ("reference", "scan", "cuda", "cuda_multilaunch")
Backend = Literal["auto", "reference", "scan", "cuda", "cuda_multilaunch"]
Weights = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
Dims = MutableMapping[str, tuple[int, str]]
_EPS = 1e-7
_KERNELS = ("cuda", "cuda_multilaunch")


def check_chunk(owner: str, chunk: Any) -> int | None:
    """``chunk``: None (the global scan) or a window of at least one line."""
    return None if chunk is None else check_int("chunk", owner, chunk, low=1)


def resolve(owner: str, backend: Any, x: torch.Tensor) -> str:
    """The backend that runs for ``x``: ``backend`` itself or, for ``"auto"``, the fused kernel
    when it can take ``x`` (CUDA, a kernel dtype, lines short enough, CuPy with a GPU), else
    ``"scan"``. A CUDA backend that cannot run here or cannot take ``x`` is a ``ValueError``."""
    from gspn2.kernels.common import CUDA_DTYPES, MAX_LINE

    on_gpu = x.is_cuda and cupy_available()
    fits = x.dtype in CUDA_DTYPES and max(x.shape[-2:]) <= MAX_LINE
    kernels_ok = on_gpu and (fits or backend != "auto")
    available = {
        "reference": True,
        "scan": True,
        "cuda": kernels_ok,
        "cuda_multilaunch": kernels_ok,
    }
    name = resolve_backend(owner, backend, available, auto=("cuda", "scan"))
    if name in _KERNELS and x.dtype not in CUDA_DTYPES:
        raise param_error(
            "x", owner, f"float32, float16 or bfloat16 on backend={name!r}", describe(x)
        )
    if name in _KERNELS and max(x.shape[-2:]) > MAX_LINE:
        expected = f"at most {MAX_LINE} pixels high and wide on backend={name!r}"
        raise param_error("x", owner, expected, describe(x))
    return name


def backend_module(name: str) -> ModuleType:
    """The module of a fast backend (``forward``/``backward`` on the line layout)."""
    if name == "scan":
        from gspn2 import scan

        return scan
    if name == "cuda":
        from gspn2.kernels import fused

        return fused
    from gspn2.kernels import multilaunch

    return multilaunch


def stable_weights(
    raw_m: torch.Tensor, raw_0: torch.Tensor, raw_p: torch.Tensor, axis: int
) -> Weights:
    """:func:`normalize_weights` on checked inputs."""
    n = raw_m.shape[axis]
    index = torch.arange(n, device=raw_m.device)
    view = [1] * raw_m.dim()
    view[axis] = n
    a_m = torch.sigmoid(raw_m) * (index > 0).view(view)
    a_0 = torch.sigmoid(raw_0)
    a_p = torch.sigmoid(raw_p) * (index < n - 1).view(view)
    total = (a_m + a_0 + a_p).clamp_min(_EPS)
    return a_m / total, a_0 / total, a_p / total


def normalize_weights(
    raw_m: torch.Tensor, raw_0: torch.Tensor, raw_p: torch.Tensor, *, axis: int = -2
) -> Weights:
    r"""The Stability-Context normalisation: :math:`a = \sigma(\text{raw})` for each of the three
    neighbours and :math:`w = a / \max(\sum a, 10^{-7})`, the sum over the neighbours that exist.

    ``axis`` is the neighbour axis: -2 (rows, for the → and ← scans over columns) or -1
    (columns, for ↓ and ↑). The first index along it has no ``-`` neighbour and the last no ``+``
    one, so their weights are 0 there; every propagation matrix is then nonnegative and
    row-stochastic, and :math:`\|h_i\|_\infty \le \|h_{i-1}\|_\infty + \|\lambda_i x_i\|_\infty`.

    Shapes:
        raw_m, raw_0, raw_p: (B, G, H, W) logits; ``raw_0`` and ``raw_p`` are cast to
        ``raw_m``'s dtype.
        returns: ``(w_m, w_0, w_p)``, each (B, G, H, W).

    NaN and inf logits are refused (``ValueError``).

    >>> w = normalize_weights(*torch.zeros(3, 1, 1, 3, 2))
    >>> sum(w)[0, 0].tolist()
    [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    """
    owner = "normalize_weights"
    dims: Dims = {}
    shape = ("B", "G", "H", "W")
    raw_m = check_tensor("raw_m", owner, raw_m, shape=shape, dims=dims)
    raw_0, raw_p = (
        _like(name, owner, t, raw_m, shape, dims)
        for name, t in (("raw_0", raw_0), ("raw_p", raw_p))
    )
    axis = check_choice("axis", owner, check_int("axis", owner, axis), (-2, -1))
    return stable_weights(raw_m, raw_0, raw_p, axis)


def _like(
    name: str, owner: str, t: Any, first: torch.Tensor, shape: Sequence[Any], dims: Dims
) -> torch.Tensor:
    """A floating tensor on ``first``'s device with the named axes, cast to ``first``'s dtype."""
    t = check_tensor(name, owner, t, shape=shape, dims=dims, device=first.device)
    return t.to(first.dtype)


def _check_weights(
    owner: str, x: torch.Tensor, named: Sequence[tuple[str, Any]], dims: Dims
) -> list[torch.Tensor]:
    """Named (B, G, H, W) weights like the checked ``x``, with G dividing C."""
    ws = []
    for name, w in named:
        ws.append(_like(name, owner, w, x, ("B", "G", "H", "W"), dims))
        if x.shape[1] % ws[-1].shape[1]:
            expected = f"a number of weight groups G dividing C={x.shape[1]}"
            raise param_error(name, owner, expected, describe(ws[-1]))
    return ws


def gspn_scan(
    x: torch.Tensor,
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    *,
    chunk: int | None = None,
    backend: Backend = "auto",
    direction: str = "lr",
) -> torch.Tensor:
    r"""One propagation scan: the hidden state h of the recurrence in the module docstring, left
    to right by default.

    Args:
        x: input.
        w_m, w_0, w_p: propagation weights, normalised (see :func:`normalize_weights`; for
            ``"tb"`` and ``"bt"`` with ``axis=-1``).
        lam: input gate λ.
        chunk: restart the recurrence every ``chunk`` lines (local windows); None is the global
            scan.
        backend: ``"auto"``, ``"reference"``, ``"scan"``, ``"cuda"`` or ``"cuda_multilaunch"``.
        direction: ``"lr"`` (→), ``"rl"`` (←), ``"tb"`` (↓) or ``"bt"`` (↑).

    Shapes:
        x, lam: (B, C, H, W).
        w_m, w_0, w_p: (B, G, H, W), G dividing C (1: shared by every channel; C: per channel).
        returns: h, (B, C, H, W), in x's dtype.

    NaN and inf are refused (``ValueError``) on every backend; the weights and λ are cast to x's
    dtype; every tensor must be on x's device.

    >>> x = torch.ones(1, 1, 2, 3)
    >>> w = normalize_weights(*torch.zeros(3, 1, 1, 2, 3))
    >>> gspn_scan(x, *w, torch.ones_like(x), backend="reference").tolist()
    [[[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]]]
    """
    owner = "gspn_scan"
    dims: Dims = {}
    x = check_tensor("x", owner, x, shape=("B", "C", "H", "W"), dims=dims)
    weights = _check_weights(owner, x, (("w_m", w_m), ("w_0", w_0), ("w_p", w_p)), dims)
    lam = _like("lam", owner, lam, x, ("B", "C", "H", "W"), dims)
    chunk = check_chunk(owner, chunk)
    check_choice("direction", owner, direction, DIRECTIONS)
    name = resolve(owner, backend, x)
    if name == "reference":
        return scan_reference(x, *weights, lam, chunk, direction)
    return scan_directions(x, [tuple(weights)], [lam], (direction,), chunk, backend_module(name))[
        :, 0
    ]


def _per_direction(owner: str, name: str, value: Any, dims: Dims, x: torch.Tensor) -> list:
    """λ, u or d: a dict direction -> (B, C, H, W) tensor, or one (B, 4, C, H, W) tensor."""
    if isinstance(value, Mapping):
        if set(value) != set(DIRECTIONS):
            raise param_error(name, owner, f"a dict with the keys {DIRECTIONS}", sorted(value))
        shape = ("B", "C", "H", "W")
        return [_like(f'{name}["{d}"]', owner, value[d], x, shape, dims) for d in DIRECTIONS]
    if not isinstance(value, torch.Tensor):
        expected = "a dict direction -> (B, C, H, W) tensor, or a (B, 4, C, H, W) tensor"
        raise param_error(name, owner, expected, describe(value), cls=TypeError)
    return list(_like(name, owner, value, x, ("B", 4, "C", "H", "W"), dims).unbind(1))


def _check_weight_dict(owner: str, weights: Any) -> list[list[tuple[str, Any]]]:
    if not isinstance(weights, Mapping) or set(weights) != set(DIRECTIONS):
        shown = sorted(weights) if isinstance(weights, Mapping) else describe(weights)
        raise param_error("weights", owner, f"a dict with the keys {DIRECTIONS}", shown)
    named = []
    for d in DIRECTIONS:
        triple = weights[d]
        if not isinstance(triple, (tuple, list)) or len(triple) != 3:
            expected = "a triple (w_m, w_0, w_p) per direction"
            raise param_error(f'weights["{d}"]', owner, expected, describe(triple))
        named.append([(f'weights["{d}"][{j}]', w) for j, w in enumerate(triple)])
    return named


def four_directions(
    x: torch.Tensor,
    weights: Mapping[str, Weights],
    lams: Sequence[torch.Tensor],
    us: Sequence[torch.Tensor],
    ds: Sequence[torch.Tensor],
    mix: torch.Tensor,
    chunk: int | None,
    backend: str,
) -> torch.Tensor:
    """:func:`gspn_4dir` on checked inputs: λ, u, d as lists in the order of :data:`DIRECTIONS`,
    ``backend`` a resolved name (see :func:`resolve`)."""
    if backend == "reference":
        hs = [
            scan_reference(x, *weights[dr], lams[k], chunk, dr) for k, dr in enumerate(DIRECTIONS)
        ]
    else:
        module = backend_module(backend)
        hs = []
        for pair in (DIRECTIONS[:2], DIRECTIONS[2:]):
            idx = [DIRECTIONS.index(dr) for dr in pair]
            ws = [weights[dr] for dr in pair]
            hs += list(
                scan_directions(x, ws, [lams[k] for k in idx], pair, chunk, module).unbind(1)
            )
    return sum(mix[k] * (us[k] * hs[k] + ds[k] * x) for k in range(4))


def gspn_4dir(
    x: torch.Tensor,
    weights: Mapping[str, Weights],
    lam: Mapping[str, torch.Tensor] | torch.Tensor,
    u: Mapping[str, torch.Tensor] | torch.Tensor,
    d: Mapping[str, torch.Tensor] | torch.Tensor,
    mix: torch.Tensor,
    chunk: int | None = None,
    backend: Backend = "auto",
) -> torch.Tensor:
    r"""The four-direction propagation

    .. math::  y = \sum_{k \in \{→, ←, ↓, ↑\}} \text{mix}_k\, (u_k \odot h_k + d_k \odot x),

    :math:`h_k` the scan of direction k (:func:`gspn_scan`), every output mapped back to the
    input's orientation before the merge. On the fast backends each direction set (→ ←, then
    ↓ ↑) is one call (one kernel launch).

    Args:
        x: input.
        weights: direction -> ``(w_m, w_0, w_p)``; ↓ and ↑ normalised over the columns
            (``normalize_weights(..., axis=-1)``).
        lam, u, d: direction -> tensor, or one tensor with the directions in the order of
            :data:`DIRECTIONS`.
        mix: merge weights (a 1×1 mix over the directions, no bias).
        chunk, backend: as in :func:`gspn_scan`.

    Shapes:
        x: (B, C, H, W).
        weights[direction]: three (B, G, H, W) tensors, one G for every direction, dividing C.
        lam, u, d: (B, 4, C, H, W), or a dict of four (B, C, H, W) tensors.
        mix: (4,).
        returns: (B, C, H, W), in x's dtype.

    NaN and inf are refused (``ValueError``) on every backend; every other tensor is cast to x's
    dtype and must be on x's device.
    """
    owner = "gspn_4dir"
    dims: Dims = {}
    x = check_tensor("x", owner, x, shape=("B", "C", "H", "W"), dims=dims)
    named = _check_weight_dict(owner, weights)
    checked = {
        direction: tuple(_check_weights(owner, x, triple, dims))
        for direction, triple in zip(DIRECTIONS, named, strict=True)
    }
    lams, us, ds = (
        _per_direction(owner, name, value, dims, x)
        for name, value in (("lam", lam), ("u", u), ("d", d))
    )
    mix = _like("mix", owner, mix, x, (4,), dims)
    chunk = check_chunk(owner, chunk)
    name = resolve(owner, backend, x)
    return four_directions(x, checked, lams, us, ds, mix, chunk, name)


def gspn_affinity(
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    u: torch.Tensor,
    *,
    chunk: int | None = None,
) -> torch.Tensor:
    r"""The dense affinity G of one channel's left-to-right scan, with
    :math:`\mathrm{vec}(u \odot h) = G\, \mathrm{vec}(x)`, vec taken column by column (index
    i·H + r). It is block lower-triangular:

    .. math::  G_{i,j} = \mathrm{diag}(u_i)\, W_i W_{i-1} \cdots W_{j+1}\, \mathrm{diag}(\lambda_j),
               \quad j \le i,

    (0 across a chunk boundary), the attention-like map the propagation applies.

    Shapes:
        w_m, w_0, w_p, lam, u: (H, W), or (1, 1, H, W) for one sample and channel.
        returns: (H·W, H·W), in w_m's dtype; (H·W)² entries must fit in memory.

    NaN and inf are refused (``ValueError``); the other planes are cast to w_m's dtype.

    >>> plane = torch.ones(1, 2)
    >>> gspn_affinity(plane, plane, plane, plane, plane).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    owner = "gspn_affinity"
    dims: Dims = {}
    names = ("w_m", "w_0", "w_p", "lam", "u")
    planes = []
    for name, t in zip(names, (w_m, w_0, w_p, lam, u), strict=True):
        t = check_tensor(name, owner, t, ndim=(2, 4), dtype="float", finite=False, nonempty=False)
        shape = (1, 1, "H", "W") if t.dim() == 4 else ("H", "W")
        if planes:
            t = _like(name, owner, t, planes[0], shape, dims)
        else:
            t = check_tensor(name, owner, t, shape=shape, dims=dims)
            n = t.shape[-2] * t.shape[-1]
            check_memory(name, owner, describe(t), n * n * t.element_size())
        planes.append(t[0, 0] if t.dim() == 4 else t)
    chunk = check_chunk(owner, chunk)
    wm, w0, wp, lm, uu = planes
    height, width = wm.shape
    step = chunk or width
    g = wm.new_zeros(height * width, height * width)
    for j in range(width):
        block = torch.diag(lm[:, j])
        for i in range(j, width):
            if i > j:
                if i % step == 0:
                    break
                tri = torch.diag(w0[:, i]) + torch.diag(wm[1:, i], -1) + torch.diag(wp[:-1, i], 1)
                block = tri @ block
            g[i * height : (i + 1) * height, j * height : (j + 1) * height] = uu[:, i, None] * block
    return g
