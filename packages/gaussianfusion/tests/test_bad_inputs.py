"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``): non-positive extents, mismatched batch sizes, NaN
means and anchors whose waypoint count differs from the head's among them."""

import torch

import gaussianfusion as gf
from paperkit.testing import BadInputs, Call

torch.manual_seed(0)
EXT = ((-8.0, 8.0), (-8.0, 8.0))
G = gf.init_uniform(2, (2, 2), EXT, 8, 8, 3)
G16 = gf.init_uniform(2, (2, 2), EXT, 16, 16, 3)
NAN_G = G.replace(mean=G.mean.clone().fill_(float("nan")))
G_B1 = G.replace(rotation=G.rotation[:1])  # mismatched batch inside g
V = torch.rand(2, 4, 3)
LIDAR, CAM = torch.randn(2, 8, 4, 4), torch.randn(2, 8, 2, 8)
EGO, CMD = torch.randn(2, 4), torch.tensor([0, 2])
TRAJ = torch.randn(2, 8, 2)
OBST = torch.randn(2, 3, 5)
DRIVE = torch.ones(2, 16, 16, dtype=torch.bool)
SCENES = gf.make_driving_scenes(2, seed=0)
SCENE = {k: SCENES[k] for k in ("obstacles", "drivable", "expert", "ego", "extent")}
BATCH = {k: SCENES[k] for k in ("lidar", "camera", "ego", "command")}
BAD_BATCHES = [
    {k: v for k, v in BATCH.items() if k != "camera"},  # a key missing
    {**BATCH, "ego": BATCH["ego"][:1]},  # mismatched batch sizes
    {**BATCH, "lidar": BATCH["lidar"] * float("nan")},  # NaN
    {**BATCH, "command": BATCH["command"] + 5},  # unknown command
]
ANCHOR_SET = torch.randn(20, 8, 2)
HEAD_OUT = {"trajs": torch.randn(2, 2, 4, 8, 2), "scores": torch.randn(2, 2, 4)}
G_ARGS = {"g": [NAN_G, G_B1, "not gaussians"]}
FEATS = {"lidar_feat": "B C H W", "cam_feat": "B C Hc Wc"}

SUITE = BadInputs(
    gf,
    [
        Call(
            gf.init_uniform,
            batch=2,
            grid=(2, 2),
            extent=EXT,
            d_e=4,
            d_m=4,
            n_classes=3,
            bad={
                "batch": [0, 10**9],
                "grid": [(0, 2)],
                "d_e": [0],
                "n_classes": [0],
                "extent": [((0.0, 0.0), (0.0, 1.0)), ((0.0, 1.0), (2.0, 1.0)), -1.0],
            },
        ),
        Call(gf.covariance, g=G, bad=G_ARGS),
        Call(
            gf.splat,
            g=G,
            values=V,
            bev_hw=(8, 8),
            extent=EXT,
            normalize=True,
            cutoff=3.0,
            chunk=3,
            eps=0.01,
            empty=0,
            backend="auto",
            shapes={"values": "B N F"},
            bad={
                **G_ARGS,
                "values": [V[:1], V[:, :3]],
                "bev_hw": [(0, 8), (10**5, 8)],
                "extent": [((1.0, -1.0), (0.0, 1.0)), 0.0],
                "cutoff": [0.0, -1.0, 100.0],
                "chunk": [0],
                "eps": [0.0],
                "empty": [3, -1],
                "backend": ["cuda", "reference"],
            },
        ),
        Call(
            gf.GaussianEncoderLayer,
            d_e=8,
            d_m=8,
            n_heads=2,
            n_points=4,
            n_classes=3,
            call={"g": G, "lidar_feat": LIDAR, "cam_feat": CAM},
            shapes=FEATS,
            bad={
                "g": [NAN_G, G_B1, G16],
                "n_points": [0, 5],
                "n_heads": [0, 3],
                "d_e": [0],
                "lidar_feat": [LIDAR[:1]],
            },
        ),
        Call(
            gf.GaussianFusionEncoder,
            n_layers=1,
            d_e=8,
            d_m=8,
            n_heads=2,
            n_points=4,
            n_classes=3,
            call={"g": G, "lidar_feat": LIDAR, "cam_feat": CAM},
            shapes=FEATS,
            bad={**G_ARGS, "n_layers": [0, 1000], "cam_feat": [CAM[:1]]},
        ),
        Call(
            gf.CascadePlanningHead,
            n_anchors=4,
            n_waypoints=8,
            n_stages=2,
            d=16,
            call={"g": G16, "ego": EGO, "command": CMD},
            shapes={"ego": "B 4", "command": "B"},
            bad={
                "g": [G, NAN_G],
                "n_anchors": [0],
                "n_stages": [0, 100],
                "d": [0, 18],
                "ego": [EGO[:1]],
                "command": [torch.tensor([0, 3])],
            },
        ),
        Call(
            gf.CascadePlanningHead,
            name="CascadePlanningHead.set_anchors",
            n_anchors=4,
            n_waypoints=8,
            d=16,
            method="set_anchors",
            call={"trajs": ANCHOR_SET, "seed": 0},
            shapes={"trajs": "M 8 2"},
            bad={"trajs": [torch.randn(20, 6, 2), torch.randn(3, 8, 2)], "seed": [-1]},
        ),
        Call(
            gf.cascade_loss,
            out=HEAD_OUT,
            expert=TRAJ,
            score_weight=1.0,
            shapes={"expert": "B 8 2"},
            bad={"out": [{}, "x"], "expert": [TRAJ[:1]], "score_weight": [-1.0]},
        ),
        Call(
            gf.kmeans_anchors,
            trajs=ANCHOR_SET,
            k=3,
            seed=0,
            shapes={"trajs": "M T 2"},
            bad={"k": [0, 21], "seed": [-1]},
        ),
        Call(
            gf.GaussianFusionPlanner,
            grid=(2, 2),
            d=8,
            n_layers=1,
            n_stages=2,
            n_anchors=4,
            sem_hw=(8, 8),
            sem_weight=1.0,
            branches="both",
            extent=32.0,
            call={"batch": BATCH},
            bad={
                "batch": BAD_BATCHES,
                "grid": [(0, 2), (1000, 1000)],
                "d": [0, 6],
                "sem_weight": [-1.0],
                "extent": [0.0],
            },
        ),
        Call(
            gf.BEVFusionPlanner,
            d=8,
            sem_weight=1.0,
            extent=32.0,
            call={"batch": BATCH},
            bad={"batch": BAD_BATCHES, "d": [0], "extent": [-1.0]},
        ),
        Call(
            gf.FlattenFusionPlanner,
            d=8,
            n_layers=1,
            n_heads=2,
            call={"batch": BATCH},
            bad={"batch": BAD_BATCHES, "d": [0, 7], "n_layers": [0]},
        ),
        Call(gf.ade, pred=TRAJ, target=TRAJ + 1, shapes={"pred": "B T 2", "target": "B T 2"}),
        Call(gf.fde, pred=TRAJ, target=TRAJ + 1, shapes={"pred": "B T 2", "target": "B T 2"}),
        Call(
            gf.collision_rate,
            traj=TRAJ,
            obstacles=OBST,
            shapes={"traj": "B T 2", "obstacles": "B M 5"},
        ),
        Call(
            gf.offroad_rate,
            traj=TRAJ,
            drivable=DRIVE,
            extent=32.0,
            shapes={"traj": "B T 2", "drivable": "B H W"},
            bad={"extent": [0.0, -1.0]},
        ),
        Call(
            gf.mini_pdms,
            traj=SCENE["expert"],
            scene=SCENE,
            shapes={"traj": "B T 2"},
            bad={
                "scene": [
                    {},
                    {**SCENE, "ego": SCENE["ego"][:1]},
                    {**SCENE, "obstacles": SCENE["obstacles"] * float("nan")},
                ]
            },
        ),
        Call(
            gf.make_driving_scenes,
            n=2,
            seed=0,
            bev_hw=(64, 64),
            extent=32.0,
            bad={"n": [0, 10**7], "seed": [-1], "bev_hw": [(4, 64)], "extent": [0.0, -3.0]},
        ),
    ],
    exempt={
        "Gaussians2D": "a plain container of tensors; every entry point that takes one "
        "validates it (the 'g' cases above)"
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
