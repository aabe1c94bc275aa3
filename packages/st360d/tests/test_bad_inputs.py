"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``: W ≠ 2H, FoV outside (10°, 170°), uint8 images)."""

import numpy as np
import torch

import st360d
from paperkit.testing import BadInputs, Call
from st360d.geometry import view_rotations

ROOM = st360d.render_room(0, (32, 64), n_boxes=1, n_spheres=1)
SCENE, RGB = ROOM["scene"], ROOM["rgb"]
VIEWS = st360d.sus_views(90.0)
TV = torch.from_numpy(VIEWS)
CAMS = st360d.CameraBatch(view_rotations(TV[7:10]), 90.0, (8, 8))
FRAMES = torch.rand(3, 8, 8, 3, generator=torch.Generator().manual_seed(0))
MAPS = torch.rand(22, 8, 8, dtype=torch.float64) + 1.0
GT = ROOM["range"]
UINT8 = (RGB * 255).to(torch.uint8)
FRAME_SHAPES = {"frames": "T h w 3"}
BAD_CAMS = {"cameras": [CAMS[:1], "not cameras"]}


def _oracle():
    return st360d.OracleDepth(SCENE)


SUITE = BadInputs(
    st360d,
    [
        Call(
            st360d.sus_views,
            fov_deg=90.0,
            overlap=0.5,
            bad={"fov_deg": [10.0, 170.0, 200.0], "overlap": [-0.1, 0.95]},
        ),
        Call(
            st360d.latlon_grid_views,
            fov_deg=90.0,
            overlap=0.5,
            bad={"fov_deg": [5.0], "overlap": [1.0]},
        ),
        Call(
            st360d.lgs_order,
            views=VIEWS,
            order="lgs",
            seed=0,
            shapes={"views": "T 2"},
            bad={"views": [np.array([[0.0, 95.0]])], "seed": [-1]},
        ),
        Call(
            st360d.erp_to_perspective,
            erp=RGB,
            views=VIEWS[:3],
            fov_deg=90.0,
            size=(8, 8),
            shapes={"erp": "H W C", "views": "T 2"},
            bad={"erp": [RGB[:, :40], UINT8], "fov_deg": [10.0, 175.0], "size": [(0, 8)]},
        ),
        Call(
            st360d.perspective_to_erp,
            maps=MAPS,
            views=TV,
            fov_deg=90.0,
            erp_hw=(16, 32),
            kind="depth",
            p=4.0,
            align="none",
            shapes={"maps": "T h w", "views": "T 2"},
            bad={
                "maps": [-MAPS],
                "erp_hw": [(16, 30), (16,)],
                "fov_deg": [180.0],
                "p": [-1.0],
                "views": [torch.tensor([[0.0, 91.0]]).repeat(22, 1)],
            },
        ),
        Call(
            st360d.ST360D,
            model=_oracle(),
            fov_deg=90.0,
            frame_size=16,
            order="lgs",
            blend_power=4.0,
            align="none",
            erp_out=None,
            overlap=0.5,
            seed=0,
            sampling="sus",
            call={"erp_rgb": RGB},
            shapes={"erp_rgb": "H W 3"},
            bad={
                "model": [3.0],
                "fov_deg": [10.0, 170.0],
                "frame_size": [2, 10**6],
                "blend_power": [-1.0],
                "erp_out": [(16, 30)],
                "overlap": [0.95],
                "erp_rgb": [UINT8, RGB[:, :40]],
                "seed": [-1],
            },
        ),
        Call(
            st360d.OracleDepth,
            scene=SCENE,
            call={"frames": FRAMES, "cameras": CAMS},
            shapes=FRAME_SHAPES,
            bad={"scene": ["room"], **BAD_CAMS},
        ),
        Call(
            st360d.ScaleDriftDepth,
            base=_oracle(),
            mode="iid",
            sigma=0.2,
            seed=0,
            call={"frames": FRAMES, "cameras": CAMS},
            shapes=FRAME_SHAPES,
            bad={"sigma": [-0.1, 10.0], "seed": [-1], "base": [None], **BAD_CAMS},
        ),
        Call(
            st360d.SequentialAlign,
            model=_oracle(),
            call={"frames": FRAMES, "cameras": CAMS},
            shapes=FRAME_SHAPES,
            bad={"model": [None], **BAD_CAMS},
        ),
        Call(
            st360d.cubemap_depth,
            model=_oracle(),
            erp_rgb=RGB,
            face_size=8,
            blend_power=4.0,
            shapes={"erp_rgb": "H W 3"},
            bad={"face_size": [4], "erp_rgb": [UINT8], "model": [1]},
        ),
        Call(
            st360d.per_patch_depth,
            model=_oracle(),
            erp_rgb=RGB,
            fov_deg=90.0,
            frame_size=8,
            blend_power=4.0,
            align="none",
            shapes={"erp_rgb": "H W 3"},
            bad={"frame_size": [4], "fov_deg": [170.0], "erp_rgb": [UINT8]},
        ),
        Call(
            st360d.render_room,
            seed=0,
            erp_hw=(16, 32),
            n_boxes=1,
            n_spheres=1,
            bad={"seed": [-1], "erp_hw": [(16, 30)], "n_boxes": [-1, 100], "n_spheres": [-1]},
        ),
        Call(
            st360d.depth_metrics,
            pred=GT * 2,
            gt=GT,
            mask=GT > 0,
            align="median",
            shapes={"pred": "H W", "gt": "H W", "mask": "H W"},
            bad={"pred": [-GT], "gt": [GT * 0], "mask": [GT < 0]},
        ),
        Call(
            st360d.frame_overlap,
            R_a=CAMS.R[0],
            R_b=CAMS.R[1],
            fov_deg=90.0,
            n=8,
            shapes={"R_a": "3 3", "R_b": "3 3"},
            bad={"n": [0], "fov_deg": [0.0]},
        ),
        Call(
            st360d.solve_disparity_shift,
            disp=MAPS[:3],
            cameras=CAMS,
            stride=2,
            shapes={"disp": "T h w"},
            bad={"stride": [0], **BAD_CAMS},
        ),
    ],
    exempt={
        "CameraBatch": "a frozen record (rotations, FoV, size); every model checks it on use",
        "Scene": "a frozen record built by render_room; OracleDepth checks its type",
        "VideoDepthModel": "a typing Protocol, not called",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
