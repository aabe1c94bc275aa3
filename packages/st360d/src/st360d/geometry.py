"""Equirectangular (ERP) and perspective geometry, and the two remaps of ST²360D.

Conventions (fixed here and tested):

* ERP image ``H x W`` with ``W = 2H``; pixel centre ``(u, v)`` has
  ``lon = 2π(u + ½)/W − π`` and ``lat = π/2 − π(v + ½)/H``; its unit ray is
  ``d = (cos lat · sin lon, sin lat, cos lat · cos lon)`` (y up, z forward).
* A view ``(lon₀, lat₀)`` has camera-to-world rotation ``R = R_y(lon₀) · R_x(−lat₀)``, focal length
  ``f = (w/2) / tan(FoV/2)`` and pixel ``(i, j)`` has the camera ray
  ``r = ((j + ½ − w/2)/f, −(i + ½ − h/2)/f, 1)``, so ``z`` is the depth along the optical axis and
  the range along the ray is ``ρ = z ‖r‖``.

``erp_to_perspective`` renders the frames of a view set (the "video" of the paper, Sec. 3);
``perspective_to_erp`` merges per-frame depth maps back into one ERP range map (Sec. 3, merging):
frustum test, z-to-range conversion and ``cos^p`` blending towards the patch centres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from paperkit import (
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = [
    "CameraBatch",
    "camera_rays",
    "erp_rays",
    "erp_to_perspective",
    "perspective_to_erp",
    "rays_to_lonlat",
    "view_rotations",
]

#: Open interval of field-of-view angles (degrees) accepted everywhere.
FOV_RANGE = (10.0, 170.0)
#: Largest ERP height accepted (8K panoramas are 4096 x 8192).
MAX_ERP_H = 8192
#: Largest frame side accepted.
MAX_FRAME = 4096


@dataclass(frozen=True)
class CameraBatch:
    """The cameras of a clip, handed to a :class:`st360d.VideoDepthModel` with its frames.

    Attributes:
        R: ``(T, 3, 3)`` camera-to-world rotations ``R = R_y(lon₀) R_x(−lat₀)``.
        fov_deg: horizontal (and vertical: frames are square by default) field of view.
        size: ``(h, w)`` of every frame.
    """

    R: torch.Tensor
    fov_deg: float
    size: tuple[int, int]

    def __len__(self) -> int:
        return int(self.R.shape[0])

    def __getitem__(self, index: Any) -> CameraBatch:
        return CameraBatch(self.R[index], self.fov_deg, self.size)


def check_fov(fov_deg: Any, owner: str, name: str = "fov_deg") -> float:
    """FoV in degrees, strictly inside (10°, 170°)."""
    return check_real(
        name, owner, fov_deg, low=FOV_RANGE[0], high=FOV_RANGE[1], low_open=True, high_open=True
    )


def check_erp_hw(erp_hw: Any, owner: str, name: str = "erp_hw") -> tuple[int, int]:
    """An ERP size ``(H, W)`` with ``W = 2H``."""
    if not isinstance(erp_hw, (tuple, list)) or len(erp_hw) != 2:
        raise param_error(name, owner, "a pair (H, W)", repr(erp_hw), cls=TypeError)
    H = check_int(name, owner, erp_hw[0], low=2, high=MAX_ERP_H)
    W = check_int(name, owner, erp_hw[1], low=4, high=2 * MAX_ERP_H)
    if W != 2 * H:
        raise param_error(name, owner, "an ERP size (H, W) with W = 2H", (H, W))
    return H, W


def check_size(size: Any, owner: str, name: str = "size") -> tuple[int, int]:
    """A frame size: an int (square) or a pair ``(h, w)``, each in [2, 4096]."""
    if isinstance(size, (tuple, list)):
        if len(size) != 2:
            raise param_error(name, owner, "a pair (h, w)", repr(size), cls=TypeError)
        return (
            check_int(name, owner, size[0], low=2, high=MAX_FRAME),
            check_int(name, owner, size[1], low=2, high=MAX_FRAME),
        )
    s = check_int(name, owner, size, low=2, high=MAX_FRAME)
    return s, s


def check_views(views: Any, owner: str, name: str = "views") -> torch.Tensor:
    """Views ``(T, 2)`` of ``[lon_deg, lat_deg]`` (numpy or torch) with ``|lat| ≤ 90``."""
    if isinstance(views, np.ndarray):
        if views.dtype.kind not in "iuf":
            raise param_error(
                name, owner, "an array of real numbers", describe(views), cls=TypeError
            )
        views = torch.from_numpy(np.ascontiguousarray(views, dtype=np.float64))
    check_tensor(name, owner, views, shape=(None, 2), dtype=None)
    if views.is_complex() or views.dtype == torch.bool:
        raise param_error(name, owner, "a real tensor", describe(views), cls=TypeError)
    views = views.to(torch.float64)
    if not bool(torch.isfinite(views).all()):
        raise param_error(name, owner, "finite (no NaN or inf)", describe(views))
    if bool((views[:, 1].abs() > 90.0).any()):
        raise param_error(name, owner, "latitudes in [-90, 90] degrees", describe(views))
    return views


def check_image(name: str, owner: str, value: Any) -> torch.Tensor:
    """An ERP image ``(H, W, C)`` (``W = 2H``), floating point, finite; uint8 is refused with a
    hint."""
    if isinstance(value, torch.Tensor) and value.dtype == torch.uint8:
        raise param_error(
            name,
            owner,
            "a floating-point tensor in [0, 1] (convert uint8 images with x.float() / 255)",
            describe(value),
            cls=TypeError,
        )
    check_tensor(name, owner, value, ndim=3)
    H, W = int(value.shape[0]), int(value.shape[1])
    if W != 2 * H:
        raise param_error(name, owner, "an ERP image with W = 2H", describe(value))
    if H > MAX_ERP_H:
        raise param_error(name, owner, f"at most {MAX_ERP_H} rows", describe(value))
    return value


def erp_rays(H: int, W: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Unit rays ``(H, W, 3)`` of the ERP pixel centres (conventions in the module docstring)."""
    lon = (torch.arange(W, dtype=dtype) + 0.5) * (2 * math.pi / W) - math.pi
    lat = math.pi / 2 - (torch.arange(H, dtype=dtype) + 0.5) * (math.pi / H)
    return lonlat_to_rays(lon[None, :].expand(H, W), lat[:, None].expand(H, W))


def lonlat_to_rays(lon: torch.Tensor, lat: torch.Tensor) -> torch.Tensor:
    """``d = (cos lat sin lon, sin lat, cos lat cos lon)`` (radians in, ``(..., 3)`` out)."""
    c = torch.cos(lat)
    return torch.stack([c * torch.sin(lon), torch.sin(lat), c * torch.cos(lon)], dim=-1)


def rays_to_lonlat(d: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Inverse of :func:`lonlat_to_rays` for rays of any length: ``(lon, lat)`` in radians."""
    lon = torch.atan2(d[..., 0], d[..., 2])
    lat = torch.atan2(d[..., 1], torch.hypot(d[..., 0], d[..., 2]))
    return lon, lat


def view_rotations(views: torch.Tensor | np.ndarray, dtype: torch.dtype = torch.float64):
    """Camera-to-world rotations ``R = R_y(lon₀) R_x(−lat₀)`` of views ``(T, 2)`` in degrees."""
    v = torch.as_tensor(views, dtype=torch.float64)
    lon, lat = torch.deg2rad(v[:, 0]), torch.deg2rad(v[:, 1])
    cy, sy, cx, sx = torch.cos(lon), torch.sin(lon), torch.cos(-lat), torch.sin(-lat)
    one, zero = torch.ones_like(lon), torch.zeros_like(lon)
    Ry = torch.stack([cy, zero, sy, zero, one, zero, -sy, zero, cy], -1).reshape(-1, 3, 3)
    Rx = torch.stack([one, zero, zero, zero, cx, -sx, zero, sx, cx], -1).reshape(-1, 3, 3)
    return (Ry @ Rx).to(dtype)


def focal(fov_deg: float, w: int) -> float:
    """``f = (w/2) / tan(FoV/2)`` in pixels."""
    return (w / 2) / math.tan(math.radians(fov_deg) / 2)


def camera_rays(fov_deg: float, size: tuple[int, int], dtype: torch.dtype = torch.float64):
    """Camera rays ``(h, w, 3)`` with unit z: ``r = ((j + ½ − w/2)/f, −(i + ½ − h/2)/f, 1)``."""
    h, w = size
    f = focal(fov_deg, w)
    x = (torch.arange(w, dtype=dtype) + 0.5 - w / 2) / f
    y = -(torch.arange(h, dtype=dtype) + 0.5 - h / 2) / f
    return torch.stack(
        [x[None, :].expand(h, w), y[:, None].expand(h, w), torch.ones(h, w, dtype=dtype)], -1
    )


def _wrap_pad(img: torch.Tensor) -> torch.Tensor:
    """``(N, C, H, W)`` with one wrapped column on each side (longitude is periodic)."""
    return torch.cat([img[..., -1:], img, img[..., :1]], dim=-1)


def sample_erp(erp: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """Bilinear samples ``(..., C)`` of an ERP ``(H, W, C)`` along world rays ``d (..., 3)``
    (longitude wraps, latitude clamps)."""
    H, W, C = erp.shape
    lon, lat = rays_to_lonlat(d.to(torch.float64))
    u = (lon + math.pi) * (W / (2 * math.pi)) - 0.5
    v = (math.pi / 2 - lat) * (H / math.pi) - 0.5
    gx = (2 * (u + 1) + 1) / (W + 2) - 1  # on the wrap-padded image of width W + 2
    gy = (2 * v + 1) / H - 1
    grid = torch.stack([gx, gy], -1).reshape(1, 1, -1, 2).to(erp.dtype)
    src = _wrap_pad(erp.permute(2, 0, 1)[None])
    out = F.grid_sample(src, grid, mode="bilinear", padding_mode="border", align_corners=False)
    return out[0, :, 0].T.reshape(*d.shape[:-1], C)


def erp_to_perspective(
    erp: torch.Tensor, views: Any, fov_deg: float = 90.0, size: Any = (518, 518)
) -> torch.Tensor:
    """Render perspective frames ``(T, h, w, C)`` of an ERP image ``(H, W, C)`` (Sec. 3).

    Every frame pixel's world ray ``R r`` is converted to (lon, lat) and the ERP is sampled
    bilinearly with ``grid_sample`` (``align_corners=False``) on a longitude-wrapped copy.
    """
    owner = "erp_to_perspective"
    check_image("erp", owner, erp)
    v = check_views(views, owner)
    fov = check_fov(fov_deg, owner)
    h, w = check_size(size, owner)
    check_memory("views", owner, v, 8.0 * v.shape[0] * h * w * (erp.shape[2] + 6))
    R = view_rotations(v)
    r = camera_rays(fov, (h, w))
    d = torch.einsum("tab,hwb->thwa", R, r)
    return sample_erp(erp, d).to(erp.dtype)


def _frustum_box(lon0: float, lat0: float, theta: float, H: int, W: int):
    """ERP rows and columns that can fall within angle ``theta`` of the axis ``(lon0, lat0)``."""
    top, bottom = lat0 + theta, lat0 - theta
    v_lo = max(0, int(math.floor((math.pi / 2 - top) * H / math.pi - 0.5)) - 1)
    v_hi = min(H, int(math.ceil((math.pi / 2 - bottom) * H / math.pi - 0.5)) + 2)
    rows = torch.arange(v_lo, v_hi)
    if top >= math.pi / 2 or bottom <= -math.pi / 2:
        return rows, torch.arange(W)
    lats = torch.linspace(
        max(bottom, -math.pi / 2 + 1e-9), min(top, math.pi / 2 - 1e-9), 64, dtype=torch.float64
    )
    num = math.cos(theta) - torch.sin(lats) * math.sin(lat0)
    cosd = num / (torch.cos(lats) * math.cos(lat0))
    if bool((cosd <= -1).any()):
        return rows, torch.arange(W)
    half = float(torch.arccos(cosd.clamp(max=1.0)).max()) + 2 * math.pi / W * 2
    if half >= math.pi:
        return rows, torch.arange(W)
    c0 = (lon0 + math.pi) * W / (2 * math.pi) - 0.5
    n = int(math.ceil(half * W / (2 * math.pi)))
    cols = torch.arange(int(math.floor(c0)) - n, int(math.ceil(c0)) + n + 1) % W
    return rows, torch.unique(cols)


def perspective_to_erp(
    maps: torch.Tensor,
    views: Any,
    fov_deg: float = 90.0,
    erp_hw: Any = (256, 512),
    kind: str = "depth",
    p: float = 4.0,
    *,
    align: str = "none",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge per-frame maps ``(T, h, w)`` into an ERP range map ``(H, W)`` and a coverage mask.

    For every ERP ray ``d`` and frame ``t`` with ``c = R_tᵀ d`` inside the frustum
    (``c_z > 0``, ``|c_x/c_z| ≤ (w/2)/f``, ``|c_y/c_z| ≤ (h/2)/f``), the frame is sampled
    bilinearly at the projection of ``d`` and converted to range ``ρ_t = z_t / c_z``
    (``= z ‖r‖``, ``c`` unit); frames are blended as
    ``ρ(d) = Σ_t w_t ρ_t / Σ_t w_t`` with ``w_t = (c_z)^p = cos^p ∠(d, axis_t)``.

    ``kind="depth"``: maps hold z (optical-axis depth); ``"disparity"``: maps hold ``1/z`` (any
    affine shift already removed). Both are interpolated in inverse depth, which is affine in the
    image coordinates on a plane, so planes are resampled exactly. ``align="sequential"`` fits
    each frame's log-scale, in frame order, to the running mosaic on the already covered pixels
    (least squares in log space) before adding it. Pixels no frame sees are 0 and False in the mask.
    """
    owner = "perspective_to_erp"
    check_tensor("maps", owner, maps, ndim=3)
    v = check_views(views, owner)
    if v.shape[0] != maps.shape[0]:
        raise param_error("views", owner, f"one view per map ({maps.shape[0]})", describe(v))
    fov = check_fov(fov_deg, owner)
    H, W = check_erp_hw(erp_hw, owner)
    check_choice("kind", owner, kind, ("depth", "disparity"))
    p = check_real("p", owner, p, low=0.0, high=64.0)
    check_choice("align", owner, align, ("none", "sequential"))
    if bool((maps <= 0).any()):
        raise param_error("maps", owner, f"positive {kind} values", describe(maps))
    check_memory("erp_hw", owner, erp_hw, 8.0 * H * W * 8)
    T, h, w = maps.shape
    dtype = maps.dtype
    inv = maps if kind == "disparity" else 1.0 / maps
    R = view_rotations(v, torch.float64)
    f = focal(fov, w)
    tx, ty = (w / 2) / f, (h / 2) / f
    theta = math.atan(math.hypot(tx, ty))
    num = torch.zeros(H * W, dtype=torch.float64)
    den = torch.zeros(H * W, dtype=torch.float64)
    lon_all = (torch.arange(W, dtype=torch.float64) + 0.5) * (2 * math.pi / W) - math.pi
    lat_all = math.pi / 2 - (torch.arange(H, dtype=torch.float64) + 0.5) * (math.pi / H)
    for t in range(T):
        lon0, lat0 = math.radians(float(v[t, 0])), math.radians(float(v[t, 1]))
        rows, cols = _frustum_box(lon0, lat0, theta, H, W)
        d = lonlat_to_rays(
            lon_all[cols][None, :].expand(len(rows), len(cols)),
            lat_all[rows][:, None].expand(len(rows), len(cols)),
        ).reshape(-1, 3)
        c = d @ R[t]  # c = R_tᵀ d, row vectors
        cz = c[:, 2]
        xn, yn = c[:, 0] / cz.clamp(min=1e-12), c[:, 1] / cz.clamp(min=1e-12)
        inside = (cz > 1e-9) & (xn.abs() <= tx) & (yn.abs() <= ty)
        if not bool(inside.any()):
            continue
        idx = (rows[:, None] * W + cols[None, :]).reshape(-1)[inside]
        gx, gy = (xn[inside] / tx), (-yn[inside] / ty)
        grid = torch.stack([gx, gy], -1).reshape(1, 1, -1, 2).to(dtype)
        s = F.grid_sample(
            inv[t][None, None], grid, mode="bilinear", padding_mode="border", align_corners=False
        )[0, 0, 0].to(torch.float64)
        rho = 1.0 / (s.clamp(min=torch.finfo(dtype).tiny) * cz[inside])
        wt = cz[inside] ** p
        if align == "sequential":
            seen = den[idx] > 0
            if bool(seen.any()):
                mosaic = num[idx][seen] / den[idx][seen]
                ws = wt[seen]
                log_s = ((torch.log(mosaic) - torch.log(rho[seen])) * ws).sum() / ws.sum()
                rho = rho * torch.exp(log_s)
        num.index_add_(0, idx, wt * rho)
        den.index_add_(0, idx, wt)
    mask = den > 0
    if not bool(mask.any()):
        raise param_error("views", owner, "views that cover at least one ERP pixel", describe(v))
    out = torch.where(mask, num / den.clamp(min=1e-300), torch.zeros_like(num))
    return out.reshape(H, W).to(dtype), mask.reshape(H, W)
