"""Every public entry point refuses bad input with a ValueError/TypeError naming the argument
(paperkit's shared bad-input suite)."""

import torch

import amvim
from amvim.orders import grid_coords
from paperkit.testing import BadInputs, Call

g = torch.Generator().manual_seed(0)


def _r(*shape):
    return torch.randn(*shape, generator=g, dtype=torch.float64)


SCAN_SHAPES = {
    "u": "B E L",
    "delta": "B E L",
    "A": "E N",
    "B": "B N L",
    "C": "B N L",
    "D": "E",
    "z": "B E L",
    "delta_bias": "E",
}
MODEL = {"img_size": 8, "patch_size": 2, "dim": 8, "depth": 2}

SUITE = BadInputs(
    amvim,
    [
        Call(
            amvim.selective_scan,
            u=_r(2, 3, 5),
            delta=_r(2, 3, 5),
            A=-_r(3, 2).abs(),
            B=_r(2, 2, 5),
            C=_r(2, 2, 5),
            D=_r(3),
            z=_r(2, 3, 5),
            delta_bias=_r(3),
            delta_softplus=True,
            return_last_state=False,
            backend="chunked",
            shapes=SCAN_SHAPES,
        ),
        Call(amvim.raster_order, h=4, w=3, bad={"h": [0], "w": [-1]}),
        Call(amvim.window_order, h=4, w=4, s=2, reverse=False, bad={"s": [0, 5], "h": [0]}),
        Call(
            amvim.order_from_coords,
            coords=grid_coords(3, 3),
            kind="window",
            s=2,
            bad={"s": [0], "coords": [torch.zeros(3, 3, dtype=torch.long)]},
            accepts={"coords": ["rank"]},
        ),
        Call(
            amvim.inverse,
            perm=torch.tensor([2, 0, 1]),
            bad={"perm": [torch.tensor([0, 0, 1])]},
            accepts={"perm": ["rank"]},
        ),
        Call(
            amvim.VimBlock,
            dim=8,
            d_state=4,
            expand=2,
            d_conv=4,
            backend="chunked",
            call={"x": torch.randn(2, 9, 8), "coords": grid_coords(3, 3)},
            shapes={"x": "B L 8", "coords": "L 2"},
            bad={"dim": [0], "d_state": [0]},
        ),
        Call(
            amvim.AMVimBlock,
            dim=8,
            window_size=2,
            window_reverse=True,
            d_state=4,
            call={"x": torch.randn(2, 9, 8), "coords": grid_coords(3, 3), "middle_cls": False},
            shapes={"x": "B L 8", "coords": "L 2"},
            bad={"window_size": [0]},
        ),
        Call(
            amvim.Vim,
            **MODEL,
            d_state=4,
            cls="mean",
            backend="auto",
            call={"x": torch.randn(2, 1, 8, 8)},
            shapes={"x": "B 1 8 8"},
            bad={"patch_size": [3, 0], "img_size": [0], "depth": [0]},
        ),
        Call(
            amvim.AMVim,
            **MODEL,
            d_state=4,
            window_sizes=[2, 4],
            cls="middle",
            call={"x": torch.randn(2, 1, 8, 8), "pruner": amvim.TokenPruner([1], 0.5)},
            shapes={"x": "B 1 8 8"},
            bad={"window_sizes": [[5], [0], [2.5]], "pruner": [3]},
        ),
        Call(
            amvim.TinyViT,
            **MODEL,
            num_heads=2,
            mlp_ratio=2,
            call={"x": torch.randn(2, 1, 8, 8)},
            shapes={"x": "B 1 8 8"},
            bad={"num_heads": [3, 0]},
        ),
        Call(
            amvim.TokenPruner,
            layers=[1, 2],
            keep_ratio=0.5,
            score="norm",
            seed=0,
            method="prune",
            call={"x": torch.randn(2, 4, 8), "coords": grid_coords(2, 2), "middle_cls": False},
            shapes={"x": "B L D", "coords": "L 2"},
            bad={"keep_ratio": [0.0, 1.5, -0.1], "layers": [[0], []]},
        ),
        Call(
            amvim.digits16,
            size=16,
            test_fraction=0.25,
            seed=0,
            bad={"size": [4], "test_fraction": [0.0, 1.0]},
        ),
        Call(
            amvim.shapes,
            n=8,
            size=8,
            noise=0.3,
            test_fraction=0.25,
            seed=0,
            bad={"n": [0], "noise": [-1.0], "size": [4]},
        ),
    ],
)
test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
