"""The models and the ST²360D pipeline end to end on rendered rooms (exact ground truth)."""

import numpy as np
import pytest
import torch

from st360d import (
    ST360D,
    CameraBatch,
    OracleDepth,
    ScaleDriftDepth,
    SequentialAlign,
    cubemap_depth,
    depth_metrics,
    frame_overlap,
    per_patch_depth,
    render_room,
    solve_disparity_shift,
    sus_views,
)
from st360d.geometry import view_rotations

HW = (64, 128)
FRAME = 48


@pytest.fixture(scope="module")
def room():
    return render_room(1, HW)


class AffineDisparity:
    """Oracle depth seen as affine disparity D = a/z + b, a new (a, b) per call (per clip)."""

    kind = "disparity"

    def __init__(self, scene):
        self.oracle, self.calls = OracleDepth(scene), 0

    def __call__(self, frames, cameras):
        self.calls += 1
        a, b = 2.0 + self.calls, 0.3 * self.calls
        return a / self.oracle(frames, cameras) + b


class Constant:
    kind = "depth"

    def __init__(self, shape=None, value=1.0):
        self.shape, self.value = shape, value

    def __call__(self, frames, cameras):
        shape = self.shape or frames.shape[:3]
        return torch.full(shape, self.value, dtype=frames.dtype)


def _absrel(out, room):
    return depth_metrics(out["depth"], room["range"], out["mask"])["abs_rel"]


def test_oracle_reproduces_ground_truth(room):
    out = ST360D(OracleDepth(room["scene"]), frame_size=FRAME)(room["rgb"])
    assert bool(out["mask"].all()) and out["frames"].shape == (22, FRAME, FRAME, 3)
    assert _absrel(out, room) < 1e-2  # bilinear interpolation across depth edges only
    # without alignment the oracle is metric: the raw map is the range itself
    raw = depth_metrics(out["depth"], room["range"], out["mask"], align="none")
    assert raw["delta1"] > 0.99


def test_oracle_below_1e3_at_the_reproduction_size():
    big = render_room(0, (256, 512))
    out = ST360D(OracleDepth(big["scene"]), frame_size=128)(big["rgb"])
    assert _absrel(out, big) < 1e-3


def test_affine_disparity_model_recovers_depth(room):
    out = ST360D(AffineDisparity(room["scene"]), frame_size=FRAME)(room["rgb"])
    oracle = ST360D(OracleDepth(room["scene"]), frame_size=FRAME)(room["rgb"])
    # the same as the depth oracle up to one scale (two clips with different (a, b))
    assert depth_metrics(out["depth"], oracle["depth"])["abs_rel"] < 1e-3


def test_disparity_shift_is_solved_exactly_on_a_clip(room):
    views = torch.from_numpy(sus_views(90.0))[7:15]  # the equator ring, consecutive overlaps
    cams = CameraBatch(view_rotations(views), 90.0, (FRAME, FRAME))
    z = OracleDepth(room["scene"])(torch.zeros(8, FRAME, FRAME, 3, dtype=torch.float64), cams)
    assert abs(solve_disparity_shift(1.7 / z + 0.42, cams) - 0.42) < 5e-3


def test_scale_drift_emulator(room):
    views = torch.from_numpy(sus_views(90.0))
    cams = CameraBatch(view_rotations(views), 90.0, (16, 16))
    frames = torch.zeros(len(views), 16, 16, 3, dtype=torch.float64)
    base = OracleDepth(room["scene"])
    z = base(frames, cams)
    iid = ScaleDriftDepth(base, "iid", sigma=0.2, seed=3)
    out = iid(frames, cams)
    ratio = (out / z).reshape(len(views), -1)
    assert torch.allclose(ratio, ratio[:, :1])  # one scale per frame
    expected = np.exp(ScaleDriftDepth(base, "iid", sigma=0.2, seed=3).log_scales(cams))
    assert np.allclose(ratio[:, 0].numpy(), expected)
    again = ScaleDriftDepth(base, "iid", sigma=0.2, seed=3)(frames, cams)
    assert torch.equal(out, again)
    # overlap mode: a repeated view (full overlap) keeps its scale; disjoint views drift
    same = CameraBatch(view_rotations(torch.zeros(5, 2)), 90.0, (16, 16))
    s = ScaleDriftDepth(base, "overlap", sigma=0.5).log_scales(same)
    assert np.allclose(s, s[0])
    assert frame_overlap(cams.R[7], cams.R[7], 90.0) == 1.0
    assert (
        frame_overlap(
            view_rotations(torch.tensor([[0.0, 0.0]]))[0],
            view_rotations(torch.tensor([[180.0, 0.0]]))[0],
            90.0,
        )
        == 0.0
    )


def test_sequential_align_removes_iid_scales_under_lgs_not_random(room):
    model = SequentialAlign(ScaleDriftDepth(OracleDepth(room["scene"]), "iid", sigma=0.3))
    lgs = ST360D(model, frame_size=FRAME, order="lgs")(room["rgb"])
    rnd = ST360D(model, frame_size=FRAME, order="random", seed=1)(room["rgb"])
    assert _absrel(lgs, room) < 1e-2
    assert _absrel(rnd, room) > 5 * _absrel(lgs, room)


def test_constant_model_through_the_pipeline(room):
    out = ST360D(Constant(), frame_size=16)(room["rgb"])
    assert float(out["depth"].min()) >= 1.0 and float(out["depth"].max()) <= 3**0.5 + 1e-6


@pytest.mark.parametrize(
    ("model", "message"),
    [(Constant(shape=(3, 16, 16)), "shape"), (Constant(value=0.0), "positive")],
)
def test_bad_model_outputs_are_refused(room, model, message):
    with pytest.raises(ValueError, match=f"'model'.*{message}"):
        ST360D(model, frame_size=16)(room["rgb"])


def test_uint8_images_are_refused_with_a_hint(room):
    with pytest.raises(TypeError, match="x.float"):
        ST360D(Constant(), frame_size=16)((room["rgb"] * 255).to(torch.uint8))


def test_baselines(room):
    oracle = OracleDepth(room["scene"])
    patch = per_patch_depth(oracle, room["rgb"], 90.0, FRAME)
    assert _absrel(patch, room) < 1e-2  # no scale error: edge interpolation only
    drift = ScaleDriftDepth(oracle, "iid", sigma=0.3)
    aligned = per_patch_depth(drift, room["rgb"], 90.0, FRAME, align="sequential")
    assert _absrel(aligned, room) < 1e-2
    cube = cubemap_depth(oracle, room["rgb"], FRAME)
    assert bool(cube["mask"].all())
    assert _absrel(cube, room) > 0.02  # per-face median normalisation loses the true scales
