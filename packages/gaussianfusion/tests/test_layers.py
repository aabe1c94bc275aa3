"""The Gaussian encoder layer (paper Sec. 3.2): sampling geometry, branches, gradients."""

import math

import pytest
import torch

from gaussianfusion.gaussians import covariance, init_uniform, mahalanobis_sq
from gaussianfusion.layers import GaussianEncoderLayer, GaussianFusionEncoder, sample_points
from paperkit.testing import assert_close


def _g(b=2, d=8):
    torch.manual_seed(0)
    g = init_uniform(b, (3, 3), d_e=d, d_m=d, n_classes=5)
    return g.replace(
        rotation=torch.rand(b, 9) * math.pi,
        log_scale=torch.randn(b, 9, 2) * 0.3 + 1.0,
        explicit=torch.randn(b, 9, d),
        implicit=torch.randn(b, 9, d),
    )


def test_sigma_points_lie_at_mahalanobis_distance_one():
    g = _g()
    pts = sample_points(g, 4)
    assert_close(pts[:, :, 0], g.mean, rtol=0, atol=0)
    for k in range(1, 5):
        m2 = mahalanobis_sq(pts[:, :, k].reshape(2, 9, 2), g).diagonal(dim1=1, dim2=2)
        assert_close(m2, torch.ones(2, 9), rtol=1e-5, atol=1e-5)
    # and their covariance is Sigma: (1/2) sum_k u_k u_k^T over (+-e1, +-e2) is the identity
    d = pts[:, :, 1:] - pts[:, :, :1]
    emp = torch.einsum("bnki,bnkj->bnij", d, d) / 2
    assert_close(emp, covariance(g), rtol=1e-5, atol=1e-5)


def test_local_branch_reads_lidar_at_the_gaussians_cell():
    # a LiDAR map that is 1 in exactly one cell: only the Gaussian there sees it
    layer = GaussianEncoderLayer(8, 8, 2, 4, d_sensor=1)
    g = init_uniform(1, (2, 1), ((-32.0, 32.0), (-32.0, 32.0)), 8, 8)
    g = g.replace(
        mean=torch.tensor([[[10.5, -5.5], [-20.5, 3.5]]]), log_scale=torch.full((1, 2, 2), -3.0)
    )  # tiny: all points in one cell
    lidar = torch.zeros(1, 1, 64, 64)
    lidar[0, 0, 42, 26] = 1.0  # row = x + 32, col = y + 32
    pts = sample_points(g)
    from gaussianfusion.layers import _bev_grid

    read = torch.nn.functional.grid_sample(lidar, _bev_grid(pts, layer.extent), align_corners=False)
    # the mean sits on the cell centre; the sigma points e^-3 m off it (bilinear: 1 - e^-3)
    side = 1 - math.exp(-3.0)
    assert_close(read[0, 0, 0], torch.tensor([1.0, side, side, side, side]), rtol=0, atol=1e-5)
    assert_close(read[0, 0, 1], torch.zeros(5), rtol=0, atol=1e-6)


def test_camera_column_of_the_azimuth():
    from gaussianfusion.layers import _azimuth_grid

    pts = torch.tensor([[[10.0, 0.0], [0.0, 10.0], [0.0, -10.0]]])
    grid = _azimuth_grid(pts)[..., 0]
    assert_close(grid, torch.tensor([[0.0, -0.5, 0.5]]), rtol=0, atol=1e-6)  # ahead, left, right


@pytest.mark.parametrize("branches", ["both", "explicit", "implicit"])
def test_branches_update_the_features_they_own(branches):
    torch.manual_seed(1)
    layer = GaussianEncoderLayer(8, 8, 2, 4, branches=branches)
    g = _g()
    lidar, cam = torch.randn(2, 8, 16, 16), torch.randn(2, 8, 8, 32)
    out = layer(g, lidar, cam)
    out2 = layer(g, lidar * 0 + 1, cam)
    changed = (out.explicit - out2.explicit).abs().max() > 1e-4
    cam_changed = (layer(g, lidar, cam * 0 + 1).explicit - out.explicit).abs().max() > 1e-4
    # the LiDAR map reaches the features only through the local branch or the global one
    assert bool(changed) and bool(cam_changed)
    # the untrained refinement leaves the properties alone (zero-initialised last layer)
    assert_close(out.mean, g.mean, rtol=0, atol=0)


def test_refinement_is_bounded():
    torch.manual_seed(2)
    layer = GaussianEncoderLayer(8, 8, 2, 4)
    torch.nn.init.normal_(layer.refine[-1].weight, std=100.0)
    g = _g()
    out = layer(g, torch.randn(2, 8, 16, 16), torch.randn(2, 8, 8, 32))
    assert float((out.mean - g.mean).detach().abs().max()) <= 2.0 + 1e-5
    assert float((out.log_scale - g.log_scale).detach().abs().max()) <= 0.5 + 1e-5


def test_encoder_is_differentiable_in_features_and_properties():
    torch.manual_seed(3)
    enc = GaussianFusionEncoder(2, 8, 8, 2, 4)
    for layer in enc.layers:
        torch.nn.init.normal_(layer.refine[-1].weight, std=0.1)
    lidar = torch.randn(2, 8, 16, 16, requires_grad=True)
    cam = torch.randn(2, 8, 8, 32, requires_grad=True)
    outs = enc(_g(), lidar, cam, return_all=True)
    assert len(outs) == 2
    (outs[-1].mean.sum() + outs[-1].implicit.sum()).backward()
    assert float(lidar.grad.abs().sum()) > 0 and float(cam.grad.abs().sum()) > 0


def test_layer_runs_under_autocast():
    layer = GaussianEncoderLayer(8, 8, 2, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = layer(_g(), torch.randn(2, 8, 16, 16), torch.randn(2, 8, 8, 32))
    assert torch.isfinite(out.explicit.float()).all()
