"""ERP <-> perspective geometry (Sec. 3): conventions, round trip, z-to-range, blending,
rotation invariance, dtype agreement."""

import math

import numpy as np
import pytest
import torch

from paperkit.testing import assert_close
from st360d import CameraBatch, erp_to_perspective, perspective_to_erp, sus_views
from st360d.geometry import camera_rays, erp_rays, lonlat_to_rays, view_rotations


def smooth_erp(H, W):
    """Colour = a smooth function of the ray (continuous across the ±180° seam)."""
    d = erp_rays(H, W)
    return torch.stack([0.5 + 0.4 * d[..., 0], 0.5 + 0.4 * d[..., 1], 0.5 + 0.3 * d[..., 2]], -1)


def test_rotation_maps_the_optical_axis_to_the_view_direction():
    views = torch.tensor([[30.0, 20.0], [-170.0, -60.0], [0.0, 90.0]], dtype=torch.float64)
    R = view_rotations(views)
    axis = R[:, :, 2]  # R (0, 0, 1)
    expected = lonlat_to_rays(torch.deg2rad(views[:, 0]), torch.deg2rad(views[:, 1]))
    assert_close(axis, expected, rtol=0, atol=1e-12)
    assert_close(R @ R.transpose(1, 2), torch.eye(3).expand(3, 3, 3).double(), rtol=0, atol=1e-12)


def test_frame_rays_match_the_analytic_camera_rays():
    # sampling the ERP of the ray itself returns R r / |r| (to interpolation accuracy)
    H, W = 256, 512
    erp = erp_rays(H, W)
    views = torch.tensor([[40.0, 10.0]], dtype=torch.float64)
    frames = erp_to_perspective(erp, views, 90.0, (16, 16))[0]
    r = camera_rays(90.0, (16, 16))
    d = r @ view_rotations(views)[0].T
    d = d / d.norm(dim=-1, keepdim=True)
    assert_close(frames, d, rtol=0, atol=2e-4)
    # the analytic pixel rays themselves: focal length (w/2)/tan(FoV/2), centre at (w/2, h/2)
    assert_close(
        r[0, 0], torch.tensor([-15 / 16, 15 / 16, 1.0], dtype=torch.float64), rtol=0, atol=1e-12
    )


def test_centre_pixel_samples_the_view_direction():
    H, W = 128, 256
    erp = erp_rays(H, W)
    views = torch.tensor([[-120.0, 35.0], [179.0, -10.0]], dtype=torch.float64)
    frames = erp_to_perspective(erp, views, 60.0, (33, 33))  # odd size: a pixel at the centre
    centre = frames[:, 16, 16]
    expected = lonlat_to_rays(torch.deg2rad(views[:, 0]), torch.deg2rad(views[:, 1]))
    assert_close(centre, expected, rtol=0, atol=1e-3)


def test_longitude_wrap_is_seamless():
    H, W = 128, 256
    erp = smooth_erp(H, W)
    views = torch.tensor([[180.0, 0.0], [-180.0, 0.0]], dtype=torch.float64)
    a, b = erp_to_perspective(erp, views, 90.0, (32, 32))
    assert_close(a, b, rtol=0, atol=1e-6)
    # the seam column: no jump between the left and right halves of the frame
    jump = (a[:, 15] - a[:, 16]).abs().max()
    inner = (a[:, 7] - a[:, 8]).abs().max()
    assert jump < 3 * inner + 1e-6


def test_round_trip_of_a_smooth_image():
    # ERP -> frames -> ERP: each colour channel merged as a "disparity" map returns colour/c_z
    # blended; dividing by the merge of constant maps (1/c_z blended) leaves the colour.
    H, W = 64, 128
    erp = smooth_erp(H, W)
    views = torch.from_numpy(sus_views(90.0))
    frames = erp_to_perspective(erp, views, 90.0, (64, 64))
    ones, _ = perspective_to_erp(
        torch.ones(len(views), 64, 64, dtype=torch.float64), views, 90.0, (H, W)
    )
    back = []
    for c in range(3):
        merged, mask = perspective_to_erp(
            frames[..., c].reciprocal(), views, 90.0, (H, W), kind="disparity"
        )
        assert bool(mask.all())
        back.append(merged / ones)
    assert (torch.stack(back, -1) - erp).abs().max() < 1e-2


def test_z_to_range_on_a_fronto_parallel_plane():
    # one view looking at a plane at z = 1: the range along a ray at angle θ is 1/cos θ
    views = torch.tensor([[0.0, 0.0]], dtype=torch.float64)
    h = w = 32
    z = torch.ones(1, h, w, dtype=torch.float64)
    H, W = 128, 256
    depth, mask = perspective_to_erp(z, views, 90.0, (H, W))
    d = erp_rays(H, W)
    cos = d[..., 2]
    assert_close(depth[mask], 1.0 / cos[mask], rtol=1e-9, atol=0)
    # the ray through the corner pixel's centre
    r = camera_rays(90.0, (h, w))[0, 0]
    cos_corner = float(1 / r.norm())
    covered = depth[mask]
    assert abs(float(covered.max()) - 1 / cos_corner) < 0.1  # corner of the frustum is near it
    assert float(covered.max()) <= 1 / math.cos(math.atan(math.sqrt(2))) + 1e-9


def test_constant_depth_model_gives_the_blended_ray_lengths():
    # check 9: z = 1 per frame, merged range = Σ w_t / cos θ_t / Σ w_t with w_t = cos^p θ_t
    fov, p = 90.0, 4.0
    views = torch.from_numpy(sus_views(fov))
    H, W = 32, 64
    depth, mask = perspective_to_erp(
        torch.ones(len(views), 16, 16, dtype=torch.float64), views, fov, (H, W), p=p
    )
    d = erp_rays(H, W).reshape(-1, 3)
    c = d @ view_rotations(views)  # (N, 3) per view? compute per view below
    num = torch.zeros(H * W, dtype=torch.float64)
    den = torch.zeros(H * W, dtype=torch.float64)
    t = math.tan(math.radians(fov) / 2)
    for R in view_rotations(views):
        c = d @ R
        inside = (c[:, 2] > 0) & ((c[:, 0] / c[:, 2]).abs() <= t) & ((c[:, 1] / c[:, 2]).abs() <= t)
        w = torch.where(inside, c[:, 2] ** p, torch.zeros_like(num))
        num += w / c[:, 2].clamp(min=1e-9)
        den += w
    assert bool(mask.all())
    assert_close(depth.reshape(-1), num / den, rtol=1e-5, atol=0)


def test_blending_is_convex_and_peaks_at_patch_centres():
    views = torch.tensor([[0.0, 0.0], [45.0, 0.0]], dtype=torch.float64)
    z = torch.stack([torch.full((16, 16), 2.0), torch.full((16, 16), 3.0)]).double()
    H, W = 64, 128
    depth, mask = perspective_to_erp(z, views, 90.0, (H, W), p=4.0)
    cos0 = erp_rays(H, W) @ view_rotations(views)[0][:, 2]
    cos1 = erp_rays(H, W) @ view_rotations(views)[1][:, 2]
    lo, hi = 2.0 / cos0.clamp(min=1e-9), 3.0 / cos1.clamp(min=1e-9)
    both = mask & (cos0 > 0.75) & (cos1 > 0.75)
    mn, mx = torch.minimum(lo, hi)[both], torch.maximum(lo, hi)[both]
    assert bool(((depth[both] >= mn - 1e-9) & (depth[both] <= mx + 1e-9)).all())
    # at the centre of view 0 (lon 0) its weight dominates: the range is closer to 2 than to 3
    centre = depth[H // 2, W // 2]
    assert abs(float(centre) - 2.0) < abs(float(centre) - 3.0)


def _colour_model(frames):
    return 1.0 + frames.mean(-1)


def test_rotation_invariance_under_longitude_roll():
    H, W = 64, 128
    g = torch.Generator().manual_seed(0)
    erp = (
        torch.nn.functional.interpolate(
            torch.rand(1, 3, 8, 16, generator=g), (H, W), mode="bilinear"
        )[0]
        .permute(1, 2, 0)
        .double()
    )
    k = 8  # pixels; 8 * 360 / 128 = 22.5 degrees
    views = torch.from_numpy(sus_views(90.0))
    shifted = views.clone()
    shifted[:, 0] = (views[:, 0] + k * 360.0 / W + 180.0) % 360.0 - 180.0
    fa = erp_to_perspective(erp, views, 90.0, (24, 24))
    fb = erp_to_perspective(torch.roll(erp, k, dims=1), shifted, 90.0, (24, 24))
    assert_close(fa, fb, rtol=0, atol=1e-9)
    da, ma = perspective_to_erp(_colour_model(fa), views, 90.0, (H, W))
    db, mb = perspective_to_erp(_colour_model(fb), shifted, 90.0, (H, W))
    assert_close(torch.roll(da, k, dims=1), db, rtol=1e-9, atol=1e-12)
    assert bool((torch.roll(ma, k, dims=1) == mb).all())


def test_float32_and_float64_agree_and_are_deterministic():
    H, W = 64, 128
    erp = smooth_erp(H, W)
    views = torch.from_numpy(sus_views(90.0))
    f64 = erp_to_perspective(erp, views, 90.0, (16, 16))
    f32 = erp_to_perspective(erp.float(), views, 90.0, (16, 16))
    assert f32.dtype == torch.float32
    assert_close(f32, f64, rtol=0, atol=1e-5)
    d64, _ = perspective_to_erp(_colour_model(f64), views, 90.0, (H, W))
    d32, _ = perspective_to_erp(_colour_model(f32), views, 90.0, (H, W))
    assert_close(d32, d64, rtol=1e-5, atol=0)
    again, _ = perspective_to_erp(_colour_model(f64), views, 90.0, (H, W))
    assert torch.equal(again, d64)


def test_camera_batch_slices():
    cams = CameraBatch(view_rotations(torch.zeros(3, 2)), 90.0, (8, 8))
    assert len(cams) == 3 and len(cams[1:]) == 2


def test_matches_py360convert_when_installed():
    py360 = pytest.importorskip("py360convert")
    H, W = 128, 256
    erp = smooth_erp(H, W).numpy()
    # py360convert's e2p: u_deg is longitude (positive to the right), v_deg latitude
    ref = py360.e2p(erp, fov_deg=90.0, u_deg=30.0, v_deg=20.0, out_hw=(32, 32))
    ours = erp_to_perspective(torch.from_numpy(erp), np.array([[30.0, 20.0]]), 90.0, (32, 32))
    assert np.abs(ours[0].numpy() - ref).max() < 2e-2
