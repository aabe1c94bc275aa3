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

Backends: ``naive`` (a per-pixel Python loop, the definition), ``torch`` (a loop over the lines,
vectorised over B, C and the pixels of a line, with a custom autograd Function whose backward is
the adjoint scan), ``cuda`` (the fused GSPN-2 kernels: one launch per direction set) and
``cuda_multilaunch`` (the GSPN-1 baseline: one launch per line). ``auto`` picks ``cuda`` for CUDA
tensors when CuPy is installed, else ``torch``. The kernel paths take float32, float16 or
bfloat16 (fp32 accumulation) and copy their inputs into the kernel layout (B, dir, C, line,
pixel), so non-contiguous inputs are accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import torch

from gspn2.scan import GSPNScanFunction, scan_naive
from paperkit import Described, check_choice, cupy_available, param_error

__all__ = [
    "BACKENDS",
    "DIRECTIONS",
    "gspn_4dir",
    "gspn_affinity",
    "gspn_scan",
    "normalize_weights",
]

#: The four scan directions: → (left to right), ←, ↓ (top to bottom), ↑.
DIRECTIONS = ("lr", "rl", "tb", "bt")
BACKENDS = ("auto", "naive", "torch", "cuda", "cuda_multilaunch")
Backend = Literal["auto", "naive", "torch", "cuda", "cuda_multilaunch"]
Weights = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
_EPS = 1e-7


def _shape(t: torch.Tensor) -> Described:
    return Described(f"a {t.dtype} tensor of shape {tuple(t.shape)}")


def _check_tensor(t: object, name: str, owner: str, ndim: int = 4) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise param_error(name, owner, "a torch.Tensor", type(t).__name__, cls=TypeError)
    if t.dim() != ndim:
        raise param_error(name, owner, f"a {ndim}-D tensor", _shape(t))
    if not t.is_floating_point():
        raise param_error(name, owner, "a floating-point tensor", _shape(t))
    return t


def normalize_weights(
    raw_m: torch.Tensor, raw_0: torch.Tensor, raw_p: torch.Tensor, *, axis: int = -2
) -> Weights:
    r"""The Stability-Context normalisation: :math:`a = \sigma(\text{raw})` for each of the three
    neighbours and :math:`w = a / \max(\sum a, 10^{-7})`, the sum over the neighbours that exist.

    ``axis`` is the neighbour axis: -2 (rows, for the → and ← scans over columns) or -1
    (columns, for ↓ and ↑). The first index along it has no ``-`` neighbour and the last no ``+``
    one, so their weights are 0 there; every propagation matrix is then nonnegative and
    row-stochastic, and :math:`\|h_i\|_\infty \le \|h_{i-1}\|_\infty + \|\lambda_i x_i\|_\infty`.

    Args:
        raw_m, raw_0, raw_p: logits of equal shape, e.g. (B, G, H, W).

    Returns:
        ``(w_m, w_0, w_p)`` of that shape.
    """
    owner = "normalize_weights"
    for name, t in (("raw_m", raw_m), ("raw_0", raw_0), ("raw_p", raw_p)):
        _check_tensor(t, name, owner, raw_m.dim() if isinstance(raw_m, torch.Tensor) else 4)
        if t.shape != raw_m.shape:
            raise param_error(name, owner, f"of raw_m's shape {tuple(raw_m.shape)}", _shape(t))
    if axis not in (-2, -1):
        raise param_error("axis", owner, "-2 (rows) or -1 (columns)", axis)
    n = raw_m.shape[axis]
    index = torch.arange(n, device=raw_m.device)
    view = [1] * raw_m.dim()
    view[axis] = n
    a_m = torch.sigmoid(raw_m) * (index > 0).view(view)
    a_0 = torch.sigmoid(raw_0)
    a_p = torch.sigmoid(raw_p) * (index < n - 1).view(view)
    total = (a_m + a_0 + a_p).clamp_min(_EPS)
    return a_m / total, a_0 / total, a_p / total


def _check_chunk(chunk: object, owner: str) -> None:
    if chunk is None:
        return
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise param_error("chunk", owner, "None or a positive integer", chunk)


def _check_scan_inputs(
    x: torch.Tensor, weights: Weights, lam: torch.Tensor, owner: str, names: tuple[str, ...]
) -> None:
    _check_tensor(x, "x", owner)
    batch, channels, height, width = x.shape
    for name, w in zip(names, weights, strict=True):
        _check_tensor(w, name, owner)
        if w.shape[0] != batch or w.shape[2:] != x.shape[2:]:
            expected = f"of shape ({batch}, G, {height}, {width}) to match x"
            raise param_error(name, owner, expected, _shape(w))
        if w.shape != weights[0].shape:
            raise param_error(name, owner, f"of {names[0]}'s shape", _shape(w))
        if channels % w.shape[1]:
            expected = f"a number of weight groups G dividing C={channels}"
            raise param_error(name, owner, expected, _shape(w))
    _check_tensor(lam, "lam", owner)
    if lam.shape != x.shape:
        raise param_error("lam", owner, f"of x's shape {tuple(x.shape)}", _shape(lam))
    for name, t in (*zip(names, weights, strict=True), ("lam", lam)):
        if t.dtype != x.dtype or t.device != x.device:
            expected = f"a {x.dtype} tensor on {x.device} like x"
            raise param_error(name, owner, expected, Described(f"{t.dtype} on {t.device}"))


def _resolve_backend(backend: str, x: torch.Tensor, owner: str) -> str:
    from gspn2.cuda import CUDA_DTYPES, MAX_LINE

    check_choice("backend", owner, backend, BACKENDS)
    if backend == "auto":
        kernel_ok = x.is_cuda and x.dtype in CUDA_DTYPES and cupy_available()
        return "cuda" if kernel_ok else "torch"
    if backend.startswith("cuda"):
        if not x.is_cuda:
            raise RuntimeError(
                f"backend={backend!r} of {owner} needs CUDA tensors; x is on {x.device}. "
                "Use backend='torch' (or 'auto') on the CPU."
            )
        if x.dtype not in CUDA_DTYPES:
            raise param_error(
                "x", owner, f"float32, float16 or bfloat16 on backend={backend!r}", _shape(x)
            )
        if max(x.shape[2:]) > MAX_LINE:
            raise param_error(
                "x",
                owner,
                f"at most {MAX_LINE} pixels high and wide on the CUDA kernels",
                _shape(x),
            )
    return backend


def _to_layout(t: torch.Tensor, horizontal: bool) -> torch.Tensor:
    """(B, K, C, H, W) -> kernel layout (B, K, C, L, S): lines are columns for → and ←."""
    return (t.transpose(-1, -2) if horizontal else t).contiguous()


def _from_layout(t: torch.Tensor, horizontal: bool) -> torch.Tensor:
    return t.transpose(-1, -2) if horizontal else t


def _scan_set(
    x: torch.Tensor,
    weights: list[Weights],
    lams: list[torch.Tensor],
    directions: tuple[str, ...],
    chunk: int | None,
    backend: str,
) -> torch.Tensor:
    """Scan one direction set (directions along the same axis) in one call: (B, K, C, H, W)."""
    horizontal = directions[0] in ("lr", "rl")
    length = x.shape[-1] if horizontal else x.shape[-2]
    k = len(directions)
    xs = _to_layout(x.unsqueeze(1).expand(-1, k, -1, -1, -1), horizontal)
    ws = [_to_layout(torch.stack([w[j] for w in weights], dim=1), horizontal) for j in range(3)]
    ls = _to_layout(torch.stack(lams, dim=1), horizontal)
    reverse = tuple(d in ("rl", "bt") for d in directions)
    h = GSPNScanFunction.apply(xs, *ws, ls, chunk or length, reverse, backend)
    return _from_layout(h, horizontal)


def _naive_direction(
    x: torch.Tensor, weights: Weights, lam: torch.Tensor, chunk: int | None, direction: str
) -> torch.Tensor:
    """A direction of the naive backend through the → definition: flip and/or transpose."""

    def to(t: torch.Tensor) -> torch.Tensor:
        t = t.transpose(-1, -2) if direction in ("tb", "bt") else t
        return t.flip(-1) if direction in ("rl", "bt") else t

    def back(t: torch.Tensor) -> torch.Tensor:
        t = t.flip(-1) if direction in ("rl", "bt") else t
        return t.transpose(-1, -2) if direction in ("tb", "bt") else t

    width = x.shape[-2] if direction in ("tb", "bt") else x.shape[-1]
    return back(scan_naive(to(x), *(to(w) for w in weights), to(lam), chunk or width))


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
    r"""One propagation scan: the hidden state h (B, C, H, W) of the recurrence in the module
    docstring, left to right by default.

    Args:
        x: input (B, C, H, W).
        w_m, w_0, w_p: propagation weights (B, G, H, W), normalised (see
            :func:`normalize_weights`), G dividing C.
        lam: input gate λ (B, C, H, W).
        chunk: restart the recurrence every ``chunk`` lines (local windows); None is the global
            scan.
        backend: ``"auto"``, ``"naive"``, ``"torch"``, ``"cuda"`` or ``"cuda_multilaunch"``.
        direction: ``"lr"`` (→), ``"rl"`` (←), ``"tb"`` (↓) or ``"bt"`` (↑).
    """
    owner = "gspn_scan"
    weights = (w_m, w_0, w_p)
    _check_scan_inputs(x, weights, lam, owner, ("w_m", "w_0", "w_p"))
    _check_chunk(chunk, owner)
    check_choice("direction", owner, direction, DIRECTIONS)
    backend = _resolve_backend(backend, x, owner)
    if backend == "naive":
        return _naive_direction(x, weights, lam, chunk, direction)
    return _scan_set(x, [weights], [lam], (direction,), chunk, backend)[:, 0]


def _per_direction(value: object, name: str, shape: torch.Size, owner: str) -> list[torch.Tensor]:
    """λ, u or d given as a dict direction -> (B, C, H, W) or as one (B, 4, C, H, W) tensor."""
    if isinstance(value, Mapping):
        if set(value) != set(DIRECTIONS):
            raise param_error(name, owner, f"a dict with the keys {DIRECTIONS}", sorted(value))
        tensors = [value[d] for d in DIRECTIONS]
    elif isinstance(value, torch.Tensor) and value.dim() == 5 and value.shape[1] == 4:
        tensors = list(value.unbind(1))
    else:
        shown = _shape(value) if isinstance(value, torch.Tensor) else type(value).__name__
        expected = "a dict direction -> (B, C, H, W) tensor, or a (B, 4, C, H, W) tensor"
        raise param_error(name, owner, expected, shown)
    for t in tensors:
        _check_tensor(t, name, owner)
        if t.shape != shape:
            raise param_error(
                name, owner, f"made of tensors of x's shape {tuple(shape)}", _shape(t)
            )
    return tensors


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
    input's orientation before the merge. On the torch and CUDA backends each direction set
    (→ ←, then ↓ ↑) is one call (one kernel launch).

    Args:
        x: input (B, C, H, W).
        weights: direction -> ``(w_m, w_0, w_p)``, each (B, G, H, W); ↓ and ↑ normalised over
            the columns (``normalize_weights(..., axis=-1)``).
        lam, u, d: direction -> (B, C, H, W) tensor, or one (B, 4, C, H, W) tensor in the order
            of :data:`DIRECTIONS`.
        mix: (4,) merge weights (a 1×1 mix over the directions, no bias).
        chunk, backend: as in :func:`gspn_scan`.
    """
    owner = "gspn_4dir"
    _check_tensor(x, "x", owner)
    if not isinstance(weights, Mapping) or set(weights) != set(DIRECTIONS):
        shown = sorted(weights) if isinstance(weights, Mapping) else type(weights).__name__
        raise param_error("weights", owner, f"a dict with the keys {DIRECTIONS}", shown)
    lams, us, ds = (
        _per_direction(v, n, x.shape, owner) for v, n in ((lam, "lam"), (u, "u"), (d, "d"))
    )
    for k, direction in enumerate(DIRECTIONS):
        triple = weights[direction]
        if not isinstance(triple, (tuple, list)) or len(triple) != 3:
            raise param_error(
                "weights", owner, "a triple (w_m, w_0, w_p) per direction", type(triple).__name__
            )
        _check_scan_inputs(x, tuple(triple), lams[k], owner, ("weights",) * 3)
    if not isinstance(mix, torch.Tensor) or mix.shape != (4,):
        shown = _shape(mix) if isinstance(mix, torch.Tensor) else type(mix).__name__
        raise param_error("mix", owner, "a tensor of shape (4,)", shown)
    _check_chunk(chunk, owner)
    backend = _resolve_backend(backend, x, owner)
    if backend == "naive":
        hs = [
            _naive_direction(x, tuple(weights[dr]), lams[k], chunk, dr)
            for k, dr in enumerate(DIRECTIONS)
        ]
    else:
        hs = []
        for pair in (DIRECTIONS[:2], DIRECTIONS[2:]):
            idx = [DIRECTIONS.index(dr) for dr in pair]
            h = _scan_set(
                x, [weights[dr] for dr in pair], [lams[k] for k in idx], pair, chunk, backend
            )
            hs += list(h.unbind(1))
    return sum(mix[k] * (us[k] * hs[k] + ds[k] * x) for k in range(4))


def gspn_affinity(
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    u: torch.Tensor,
    *,
    chunk: int | None = None,
) -> torch.Tensor:
    r"""The dense (H·W, H·W) affinity G of one channel's left-to-right scan, with
    :math:`\mathrm{vec}(u \odot h) = G\, \mathrm{vec}(x)`, vec taken column by column (index
    i·H + r). It is block lower-triangular:

    .. math::  G_{i,j} = \mathrm{diag}(u_i)\, W_i W_{i-1} \cdots W_{j+1}\, \mathrm{diag}(\lambda_j),
               \quad j \le i,

    (0 across a chunk boundary), the attention-like map the propagation applies.

    Args:
        w_m, w_0, w_p, lam, u: (H, W), or (1, 1, H, W) for one sample and channel.
    """
    owner = "gspn_affinity"
    names = ("w_m", "w_0", "w_p", "lam", "u")
    planes = []
    for name, t in zip(names, (w_m, w_0, w_p, lam, u), strict=True):
        if not isinstance(t, torch.Tensor):
            raise param_error(name, owner, "a torch.Tensor", type(t).__name__, cls=TypeError)
        plane = t[0, 0] if t.dim() == 4 and t.shape[:2] == (1, 1) else t
        if plane.dim() != 2 or (planes and plane.shape != planes[0].shape):
            raise param_error(name, owner, "an (H, W) or (1, 1, H, W) tensor like w_m", _shape(t))
        planes.append(plane)
    _check_chunk(chunk, owner)
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
