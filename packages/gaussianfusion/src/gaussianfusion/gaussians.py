"""2-D Gaussians on the ground plane and their splatting to a BEV grid (paper Sec. 3.2-3.3).

Gaussian i has a mean mu_i in R^2 (metres, ego frame: x forward, y left), a log-scale l_i in R^2,
a rotation theta_i, an opacity o_i = sigmoid(a_i), semantic logits q_i in R^S and two features,
an explicit f^e_i and an implicit f^m_i. Its covariance is

    Sigma_i = R(theta_i) diag(exp(2 l_i)) R(theta_i)^T,

and splatting evaluates, at every BEV cell centre p (Sec. 3.3),

    B(p) = sum_i o_i G_i(p) v_i,   G_i(p) = exp(-1/2 (p - mu_i)^T Sigma_i^{-1} (p - mu_i)).

BEV convention: rows of a (H, W) map run along x (row h has centre x0 + (h + 1/2) dx), columns
along y (column w has centre y0 + (w + 1/2) dy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

import torch

from gaussianfusion.kernels import splat_triton
from paperkit import (
    check_int,
    check_memory,
    check_real,
    check_tensor,
    param_error,
    resolve_backend,
)

__all__ = [
    "Extent",
    "Gaussians2D",
    "cell_centres",
    "check_extent",
    "covariance",
    "init_uniform",
    "mahalanobis_sq",
    "splat",
]

Extent = tuple[tuple[float, float], tuple[float, float]]
DEFAULT_EXTENT: Extent = ((-32.0, 32.0), (-32.0, 32.0))
#: Largest BEV side and number of Gaussians accepted (bounds work before it starts).
MAX_SIDE = 4096
MAX_GAUSSIANS = 1 << 20


@dataclass
class Gaussians2D:
    """A batch of N 2-D Gaussians (tensors of shape (B, N, ...)).

    Attributes:
        mean: (B, N, 2) mu_i in metres.
        log_scale: (B, N, 2) l_i; the standard deviations along the principal axes are exp(l_i).
        rotation: (B, N) theta_i in radians.
        opacity_logit: (B, N) a_i; the opacity is o_i = sigmoid(a_i) (:attr:`opacity`).
        semantic: (B, N, S) logits q_i; the class distribution is softmax(q_i).
        explicit: (B, N, d_e) f^e_i, the scene-content feature (supervised through splatting).
        implicit: (B, N, d_m) f^m_i, the planning feature (no direct supervision).
    """

    mean: torch.Tensor
    log_scale: torch.Tensor
    rotation: torch.Tensor
    opacity_logit: torch.Tensor
    semantic: torch.Tensor
    explicit: torch.Tensor
    implicit: torch.Tensor

    @property
    def opacity(self) -> torch.Tensor:
        """o_i = sigmoid(a_i), shape (B, N)."""
        return torch.sigmoid(self.opacity_logit)

    @property
    def batch(self) -> int:
        return self.mean.shape[0]

    @property
    def n(self) -> int:
        return self.mean.shape[1]

    def to(self, *args, **kwargs) -> Gaussians2D:
        """Every property through ``Tensor.to(*args, **kwargs)`` (device and/or dtype)."""
        return Gaussians2D(*(getattr(self, f.name).to(*args, **kwargs) for f in fields(self)))

    def replace(self, **changes: torch.Tensor) -> Gaussians2D:
        """A copy with the given attributes replaced."""
        return replace(self, **changes)

    def validate(self, owner: str, name: str = "g") -> Gaussians2D:
        """Raise a ValueError/TypeError naming ``name`` unless every attribute is a finite
        floating tensor with the shapes above (shared B and N)."""
        if not isinstance(self, Gaussians2D):
            raise param_error(name, owner, "a Gaussians2D", type(self).__name__, cls=TypeError)
        dims: dict = {}
        shapes = {
            "mean": ("B", "N", 2),
            "log_scale": ("B", "N", 2),
            "rotation": ("B", "N"),
            "opacity_logit": ("B", "N"),
            "semantic": ("B", "N", None),
            "explicit": ("B", "N", None),
            "implicit": ("B", "N", None),
        }
        for f in fields(self):
            check_tensor(
                f"{name}.{f.name}", owner, getattr(self, f.name), shape=shapes[f.name], dims=dims
            )
        return self


def check_gaussians(name: str, owner: str, g: object) -> Gaussians2D:
    """``g`` if it is a valid :class:`Gaussians2D`, else a ValueError/TypeError naming ``name``."""
    if not isinstance(g, Gaussians2D):
        raise param_error(name, owner, "a Gaussians2D", type(g).__name__, cls=TypeError)
    try:
        return g.validate(owner, name)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"The '{name}' parameter of {owner}: {exc}") from None


def check_dtype(name: str, owner: str, value: torch.Tensor, module: torch.nn.Module) -> None:
    """Refuse a floating tensor whose dtype differs from ``module``'s parameters (convert one
    with ``.to``; under ``torch.autocast`` both stay float32)."""
    p = next(module.parameters())
    if value.dtype != p.dtype:
        raise param_error(
            name,
            owner,
            f"of dtype {p.dtype} (as the module's parameters)",
            str(value.dtype),
            cls=TypeError,
        )


def check_extent(name: str, owner: str, extent: object) -> Extent:
    """``((x0, x1), (y0, y1))`` with finite x1 > x0 and y1 > y0; a float e is ((-e, e), (-e, e))."""
    if isinstance(extent, (int, float)) and not isinstance(extent, bool):
        e = check_real(name, owner, extent, low=0, low_open=True)
        return ((-e, e), (-e, e))
    try:
        (x0, x1), (y0, y1) = extent  # type: ignore[misc]
        vals = [float(v) for v in (x0, x1, y0, y1)]
    except (TypeError, ValueError) as exc:
        raise param_error(
            name,
            owner,
            "((x0, x1), (y0, y1)) or a positive half-size",
            repr(extent),
            cls=TypeError,
        ) from exc
    if not all(math.isfinite(v) for v in vals) or vals[1] <= vals[0] or vals[3] <= vals[2]:
        raise param_error(
            name,
            owner,
            "((x0, x1), (y0, y1)) with finite x1 > x0 and y1 > y0 (a positive size)",
            repr(extent),
        )
    return ((vals[0], vals[1]), (vals[2], vals[3]))


def check_hw(name: str, owner: str, hw: object) -> tuple[int, int]:
    """(H, W) of positive integers up to :data:`MAX_SIDE`."""
    try:
        h, w = hw  # type: ignore[misc]
    except (TypeError, ValueError) as exc:
        raise param_error(name, owner, "a pair (H, W)", repr(hw), cls=TypeError) from exc
    return (
        check_int(name, owner, h, low=1, high=MAX_SIDE),
        check_int(name, owner, w, low=1, high=MAX_SIDE),
    )


def init_uniform(
    batch: int,
    grid: tuple[int, int] = (16, 16),
    extent: Extent = DEFAULT_EXTENT,
    d_e: int = 64,
    d_m: int = 64,
    n_classes: int = 5,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> Gaussians2D:
    """Gaussians on a uniform ``grid`` over ``extent`` (Sec. 3.2, initialisation).

    Means at the centres of a (gx, gy) grid of cells, isotropic scale = half the spacing
    (the larger of the two), theta = 0, o = 0.5 (a = 0), uniform semantics (q = 0) and zero
    features; the planner adds learned embeddings of the grid index to the features.
    """
    owner = "init_uniform"
    batch = check_int("batch", owner, batch, low=1, high=1 << 16)
    gx, gy = check_hw("grid", owner, grid)
    (x0, x1), (y0, y1) = check_extent("extent", owner, extent)
    d_e = check_int("d_e", owner, d_e, low=1, high=1 << 14)
    d_m = check_int("d_m", owner, d_m, low=1, high=1 << 14)
    n_classes = check_int("n_classes", owner, n_classes, low=1, high=1024)
    n = gx * gy
    if n > MAX_GAUSSIANS:
        raise param_error("grid", owner, f"at most {MAX_GAUSSIANS} Gaussians", repr(grid))
    check_memory("batch", owner, batch, 4.0 * batch * n * (d_e + d_m + n_classes + 8))
    dx, dy = (x1 - x0) / gx, (y1 - y0) / gy
    xs = x0 + (torch.arange(gx, dtype=dtype, device=device) + 0.5) * dx
    ys = y0 + (torch.arange(gy, dtype=dtype, device=device) + 0.5) * dy
    mean = torch.stack(torch.meshgrid(xs, ys, indexing="ij"), -1).reshape(1, n, 2)
    kw = {"dtype": dtype, "device": device}
    return Gaussians2D(
        mean=mean.expand(batch, n, 2).clone(),
        log_scale=torch.full((batch, n, 2), math.log(0.5 * max(dx, dy)), **kw),
        rotation=torch.zeros(batch, n, **kw),
        opacity_logit=torch.zeros(batch, n, **kw),
        semantic=torch.zeros(batch, n, n_classes, **kw),
        explicit=torch.zeros(batch, n, d_e, **kw),
        implicit=torch.zeros(batch, n, d_m, **kw),
    )


def covariance(g: Gaussians2D) -> torch.Tensor:
    """Sigma_i = R(theta_i) diag(exp(2 l_i)) R(theta_i)^T, shape (B, N, 2, 2) (Sec. 3.2)."""
    g = check_gaussians("g", "covariance", g)
    c, s = torch.cos(g.rotation), torch.sin(g.rotation)
    var = torch.exp(2.0 * g.log_scale)
    sxx = c * c * var[..., 0] + s * s * var[..., 1]
    syy = s * s * var[..., 0] + c * c * var[..., 1]
    sxy = c * s * (var[..., 0] - var[..., 1])
    return torch.stack([torch.stack([sxx, sxy], -1), torch.stack([sxy, syy], -1)], -2)


def mahalanobis_sq(points: torch.Tensor, g: Gaussians2D) -> torch.Tensor:
    """(p - mu_i)^T Sigma_i^{-1} (p - mu_i) for points (B, P, 2): shape (B, N, P).

    Computed in each Gaussian's own frame, u = R^T (p - mu), as sum_k (u_k exp(-l_k))^2: no
    matrix inverse, differentiable in mu, l and theta. No argument checks (used by splat, the head).
    """
    d = points[:, None, :, :] - g.mean[:, :, None, :]
    c, s = torch.cos(g.rotation)[..., None], torch.sin(g.rotation)[..., None]
    u = (c * d[..., 0] + s * d[..., 1]) * torch.exp(-g.log_scale[..., 0:1])
    v = (-s * d[..., 0] + c * d[..., 1]) * torch.exp(-g.log_scale[..., 1:2])
    return u * u + v * v


def cell_centres(
    bev_hw: tuple[int, int], extent: Extent, *, dtype=torch.float32, device=None
) -> torch.Tensor:
    """Cell centres of a (H, W) BEV grid over ``extent``, shape (H*W, 2), row-major."""
    (x0, x1), (y0, y1) = extent
    h, w = bev_hw
    xs = x0 + (torch.arange(h, dtype=dtype, device=device) + 0.5) * (x1 - x0) / h
    ys = y0 + (torch.arange(w, dtype=dtype, device=device) + 0.5) * (y1 - y0) / w
    return torch.stack(torch.meshgrid(xs, ys, indexing="ij"), -1).reshape(h * w, 2)


def _splat_dense(g: Gaussians2D, values: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
    """(B, F, P): every Gaussian at every cell, O(B N P) memory."""
    pts = centres.expand(g.batch, -1, -1)
    w = g.opacity[..., None] * torch.exp(-0.5 * mahalanobis_sq(pts, g))  # (B, N, P)
    return torch.einsum("bnp,bnf->bfp", w, values)


def _splat_chunked(
    g: Gaussians2D, values: torch.Tensor, centres: torch.Tensor, chunk: int
) -> torch.Tensor:
    """As :func:`_splat_dense`, ``chunk`` Gaussians at a time: O(B chunk P) memory."""
    out = None
    for start in range(0, g.n, chunk):
        sl = slice(start, start + chunk)
        part = Gaussians2D(
            g.mean[:, sl],
            g.log_scale[:, sl],
            g.rotation[:, sl],
            g.opacity_logit[:, sl],
            g.semantic[:, sl],
            g.explicit[:, sl],
            g.implicit[:, sl],
        )
        term = _splat_dense(part, values[:, sl], centres)
        out = term if out is None else out + term
    return out


def window_radii(g: Gaussians2D, extent: Extent, bev_hw: tuple[int, int], cutoff: float):
    """Half-widths (in cells, rows and columns) of the window that holds every cell within
    Mahalanobis distance ``cutoff`` of each Gaussian: ceil(r sqrt(Sigma_xx) / dx) + 1 and the
    same along y (the ellipse's bounding box plus the cell the mean lies in). (B, N) each."""
    (x0, x1), (y0, y1) = extent
    h, w = bev_hw
    sx, sy = _axis_std(g.log_scale, g.rotation)
    kx = torch.ceil(cutoff * sx * h / (x1 - x0)) + 1
    ky = torch.ceil(cutoff * sy * w / (y1 - y0)) + 1
    return kx.clamp(max=h).long(), ky.clamp(max=w).long()


def _axis_std(log_scale: torch.Tensor, rotation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """sqrt(Sigma_xx) and sqrt(Sigma_yy), (B, N) each: the half-extent of each Gaussian's
    ellipse along x and y per unit of Mahalanobis radius."""
    c2, s2 = torch.cos(rotation) ** 2, torch.sin(rotation) ** 2
    var = torch.exp(2.0 * log_scale)
    return (c2 * var[..., 0] + s2 * var[..., 1]).sqrt(), (
        s2 * var[..., 0] + c2 * var[..., 1]
    ).sqrt()


def _splat_culled(
    g: Gaussians2D,
    values: torch.Tensor,
    extent: Extent,
    bev_hw: tuple[int, int],
    cutoff: float,
    chunk: int | None,
) -> torch.Tensor:
    """Each Gaussian touches only the cells of its window (:func:`window_radii`) and, inside it,
    only those within Mahalanobis distance ``cutoff``; scatter-added into (B, F, H*W).

    Gaussians are grouped by window size (rounded up to a power of two cells), so the work is
    sum_i (2 k_i + 1)^2 ~ N r^2 rather than N H W.
    """
    (x0, x1), (y0, y1) = extent
    h, w = bev_hw
    b, n, f = values.shape
    dtype, device = values.dtype, values.device
    kx, ky = window_radii(g, extent, bev_hw, cutoff)
    k = torch.maximum(kx, ky)
    bucket = torch.where(k <= 1, torch.ones_like(k), 2 ** torch.ceil(torch.log2(k.float())).long())
    out = values.new_zeros(b, f, h * w)
    flat = lambda t: t.reshape(b * n, *t.shape[2:])  # noqa: E731
    mean, logs, rot = flat(g.mean), flat(g.log_scale), flat(g.rotation)
    opac, vals = flat(g.opacity), flat(values)
    batch_of = torch.arange(b, device=device).repeat_interleave(n)
    bucket = bucket.reshape(-1)
    # the window of a mean outside the grid is centred on the nearest cell: every cell within
    # k of the mean's own cell that lies in the grid is within k of the clamped one
    row = torch.floor((mean[:, 0] - x0) * h / (x1 - x0)).clamp(-1, h).long().clamp(0, h - 1)
    col = torch.floor((mean[:, 1] - y0) * w / (y1 - y0)).clamp(-1, w).long().clamp(0, w - 1)
    out_flat = out.permute(0, 2, 1).reshape(b * h * w, f)
    for size in torch.unique(bucket).tolist():
        idx_all = torch.nonzero(bucket == size).squeeze(1)
        offs = torch.arange(-size, size + 1, device=device)
        dr, dc = torch.meshgrid(offs, offs, indexing="ij")
        dr, dc = dr.reshape(-1), dc.reshape(-1)
        step = idx_all.numel() if chunk is None else chunk
        for start in range(0, idx_all.numel(), step):
            idx = idx_all[start : start + step]
            rr = row[idx, None] + dr  # (M, K)
            cc = col[idx, None] + dc
            inside = (rr >= 0) & (rr < h) & (cc >= 0) & (cc < w)
            px = x0 + (rr.to(dtype) + 0.5) * (x1 - x0) / h
            py = y0 + (cc.to(dtype) + 0.5) * (y1 - y0) / w
            dx, dy = px - mean[idx, 0:1], py - mean[idx, 1:2]
            c, s = torch.cos(rot[idx])[:, None], torch.sin(rot[idx])[:, None]
            u = (c * dx + s * dy) * torch.exp(-logs[idx, 0:1])
            v = (-s * dx + c * dy) * torch.exp(-logs[idx, 1:2])
            m2 = u * u + v * v
            keep = inside & (m2 <= cutoff * cutoff)
            wgt = torch.where(keep, opac[idx, None] * torch.exp(-0.5 * m2), torch.zeros_like(m2))
            target = batch_of[idx, None] * (h * w) + rr.clamp(0, h - 1) * w + cc.clamp(0, w - 1)
            contrib = wgt[..., None] * vals[idx, None, :]  # (M, K, F)
            out_flat = out_flat.index_add(0, target.reshape(-1), contrib.reshape(-1, f))
    return out_flat.reshape(b, h * w, f).permute(0, 2, 1)


def _torch_map(mean, log_scale, rotation, opacity_logit, values, bev_hw, extent, cutoff):
    """The torch map (B, F, H*W) of these Gaussian properties: culled with ``cutoff``, else dense
    in chunks of 256 Gaussians (what the Triton path's backward differentiates)."""
    none = values[..., :0]
    g = Gaussians2D(mean, log_scale, rotation, opacity_logit, none, none, none)
    if cutoff is not None:
        return _splat_culled(g, values, extent, bev_hw, cutoff, None)
    centres = cell_centres(bev_hw, extent, dtype=values.dtype, device=values.device)
    return _splat_chunked(g, values, centres, 256)


def splat(
    g: Gaussians2D,
    values: torch.Tensor,
    bev_hw: tuple[int, int] = (64, 64),
    extent: Extent = DEFAULT_EXTENT,
    normalize: bool = False,
    cutoff: float | None = None,
    chunk: int | None = None,
    *,
    eps: float = 1e-2,
    empty: int = 0,
    backend: str = "auto",
) -> torch.Tensor:
    """Splat per-Gaussian ``values`` (B, N, F) to a BEV map (B, F, H, W) (Sec. 3.3, eq. of B(p)).

    B(p) = sum_i o_i G_i(p) v_i at every cell centre p. Three paths give the same map:

    - dense (``cutoff=None, chunk=None``): every Gaussian at every cell, O(B N H W) memory;
    - chunked (``chunk=c``): ``c`` Gaussians at a time, O(B c H W) memory, equal to dense up to
      float rounding;
    - culled (``cutoff=r``): each Gaussian only within Mahalanobis distance r of its mean
      (a per-Gaussian window), O(N r^2) work. It drops terms of size at most
      exp(-r^2/2) o_i |v_i| per Gaussian (1.1e-2 at r = 3, 4.0e-5 at r = 4.5).

    ``backend="triton"`` runs the dense or culled map as one tile-based Triton kernel
    (:mod:`gaussianfusion.kernels.splat_triton`: fp32 accumulation, memory of the output alone,
    ``chunk`` unused; the backward recomputes the torch path). It needs Triton with a CUDA
    device or ``TRITON_INTERPRET=1``. ``"torch"`` and ``"auto"`` run the torch paths above.

    ``normalize=True`` returns the semantic map (B(p) + eps e_empty) / (sum_i o_i G_i(p) + eps):
    with ``values`` = softmax(q_i) over classes that include an empty class (index ``empty``) it
    is a distribution per cell, and cells no Gaussian covers are empty.
    """
    owner = "splat"
    g = check_gaussians("g", owner, g)
    dims = {"B": (g.batch, "g"), "N": (g.n, "g")}
    check_tensor("values", owner, values, shape=("B", "N", "F"), dims=dims)
    if values.dtype != g.mean.dtype:
        raise param_error(
            "values", owner, f"of dtype {g.mean.dtype} (as g)", str(values.dtype), cls=TypeError
        )
    hw = check_hw("bev_hw", owner, bev_hw)
    ext = check_extent("extent", owner, extent)
    if not isinstance(normalize, bool):
        raise param_error("normalize", owner, "True or False", repr(normalize), cls=TypeError)
    if cutoff is not None:
        cutoff = check_real("cutoff", owner, cutoff, low=0, low_open=True, high=64)
    if chunk is not None:
        chunk = check_int("chunk", owner, chunk, low=1, high=MAX_GAUSSIANS)
    eps = check_real("eps", owner, eps, low=0, low_open=True)
    f = values.shape[-1]
    if normalize:
        empty = check_int("empty", owner, empty, low=0, high=f - 1)
    name = resolve_backend(
        owner, backend, {"torch": True, "triton": splat_triton.supported(values)}, auto=("torch",)
    )
    p = hw[0] * hw[1]
    per = g.n if chunk is None else min(chunk, g.n)
    if cutoff is None and name == "torch":
        check_memory("bev_hw", owner, bev_hw, 3.0 * values.element_size() * g.batch * per * p * 2)
    check_memory("bev_hw", owner, bev_hw, 2.0 * values.element_size() * g.batch * p * (f + 1))
    if normalize:
        values = torch.cat([values, torch.ones_like(values[..., :1])], -1)
    if name == "triton":
        box = (
            None if cutoff is None else cutoff * torch.stack(_axis_std(g.log_scale, g.rotation), -1)
        )
        out = splat_triton.splat(
            g.mean,
            g.log_scale,
            g.rotation,
            g.opacity_logit,
            values,
            hw,
            ext,
            cutoff,
            box,
            _torch_map,
        )
    elif cutoff is not None:
        out = _splat_culled(g, values, ext, hw, cutoff, chunk)
    else:
        centres = cell_centres(hw, ext, dtype=values.dtype, device=values.device)
        out = (
            _splat_dense(g, values, centres)
            if chunk is None
            else _splat_chunked(g, values, centres, chunk)
        )
    if normalize:
        total = out[:, -1:]
        out = out[:, :-1]
        bump = torch.zeros_like(out)
        bump[:, empty] = eps
        out = (out + bump) / (total + eps)
    return out.reshape(g.batch, f, *hw)
