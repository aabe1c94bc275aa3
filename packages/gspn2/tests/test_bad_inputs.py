"""The shared bad-input suite over every public name of gspn2 (paperkit.testing.BadInputs)."""

import torch

import gspn2
from gspn2 import (
    DIRECTIONS,
    GSPN1Mixer,
    GSPN2Mixer,
    GSPNClassifier,
    SoftmaxMixer,
    gspn_4dir,
    gspn_affinity,
    gspn_scan,
    normalize_weights,
)
from paperkit.testing import BadInputs, Call

g = torch.Generator().manual_seed(0)
B, C, H, W, G = 2, 4, 3, 5, 2
x = torch.randn(B, C, H, W, generator=g, dtype=torch.float64)
raw = torch.randn(3, B, G, H, W, generator=g, dtype=torch.float64)
w_m, w_0, w_p = normalize_weights(*raw)
lam = torch.rand(B, C, H, W, generator=g, dtype=torch.float64)
weights = {d: normalize_weights(*raw, axis=-2 if d in ("lr", "rl") else -1) for d in DIRECTIONS}
lam4, u4, d4 = (torch.rand(B, 4, C, H, W, generator=g, dtype=torch.float64) for _ in range(3))
plane = torch.rand(H, W, generator=g, dtype=torch.float64)
# a plane whose dense (H·W)² affinity would need 8 TB
huge_plane = torch.zeros(1000, 1000, dtype=torch.float64)

SCAN = {"x": "B C H W", "w_m": "B G H W", "w_0": "B G H W", "w_p": "B G H W", "lam": "B C H W"}
MAP = {"x": "B 8 H W"}

SUITE = BadInputs(
    gspn2,
    [
        Call(
            normalize_weights,
            raw_m=raw[0],
            raw_0=raw[1],
            raw_p=raw[2],
            axis=-2,
            shapes={"raw_m": "B G H W", "raw_0": "B G H W", "raw_p": "B G H W"},
            bad={"axis": [0, 1, -3]},
        ),
        Call(
            gspn_scan,
            x=x,
            w_m=w_m,
            w_0=w_0,
            w_p=w_p,
            lam=lam,
            chunk=2,
            backend="scan",
            direction="rl",
            shapes=SCAN,
            bad={"chunk": [0, -1], "w_m": [torch.rand(B, 3, H, W, dtype=torch.float64)]},
        ),
        Call(
            gspn_4dir,
            x=x,
            weights=weights,
            lam=lam4,
            u=u4,
            d=d4,
            mix=torch.full((4,), 0.25, dtype=torch.float64),
            chunk=2,
            backend="scan",
            shapes={
                "x": "B C H W",
                "lam": "B 4 C H W",
                "u": "B 4 C H W",
                "d": "B 4 C H W",
                "mix": "4",
            },
            bad={"chunk": [0], "weights": [{"lr": weights["lr"]}, [1, 2, 3]], "lam": [{"lr": x}]},
        ),
        Call(
            gspn_affinity,
            w_m=plane,
            w_0=plane,
            w_p=plane,
            lam=plane,
            u=plane,
            chunk=2,
            shapes=dict.fromkeys(("w_m", "w_0", "w_p", "lam", "u"), "H W"),
            bad={"chunk": [0], "w_m": [huge_plane]},
        ),
        Call(
            GSPN2Mixer,
            dim=8,
            proxy_dim=4,
            d_state=4,
            shared=True,
            groups=2,
            chunk=2,
            backend="scan",
            call={"x": torch.randn(2, 8, 3, 4)},
            shapes=MAP,
            bad={
                "dim": [0, 10**6],
                "proxy_dim": [0, 10**9],
                "d_state": [0, 10**9],
                "groups": [0, 3],
                "chunk": [0],
            },
        ),
        Call(
            GSPN1Mixer,
            dim=8,
            d_state=4,
            chunk=2,
            backend="scan",
            call={"x": torch.randn(2, 8, 3, 4)},
            shapes=MAP,
            bad={"dim": [0, 10**6], "d_state": [0, 10**9], "chunk": [0]},
        ),
        Call(
            SoftmaxMixer,
            dim=8,
            heads=2,
            call={"x": torch.randn(2, 8, 3, 4)},
            shapes=MAP,
            bad={"dim": [0, 10**6], "heads": [0, 3]},
        ),
        Call(
            GSPNClassifier,
            img_size=8,
            in_chans=1,
            num_classes=2,
            dims=[8],
            depths=[1],
            mixer="gspn2",
            patch_size=2,
            mlp_ratio=2.0,
            call={"x": torch.randn(2, 1, 8, 8)},
            shapes={"x": "B 1 8 8"},
            bad={
                "img_size": [0, 7, 2**20],
                "in_chans": [0],
                "num_classes": [0, 10**12],
                "dims": [[0], [10**6]],
                "depths": [[0], [10**9]],
                "patch_size": [0, 3],
                "mlp_ratio": [0.0, -1.0, 1e9],
            },
        ),
    ],
)
test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
