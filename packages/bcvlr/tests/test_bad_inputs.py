"""Every public entry point with one valid call; the shared suite derives the bad ones
(check 11: clips with fewer than 3 frames, obs shape or action-space mismatch, budget <= 0)."""

import gymnasium as gym
import numpy as np
import torch

import bcvlr
from paperkit.testing import BadInputs, Call, fresh

GRID, POINT = "bcvlr/PixelGridReach-v0", "bcvlr/PixelPointReach-v0"
SPACE = gym.spaces.Discrete(5)
SMALL = bcvlr.BCVLRConfig.small()
TINY = SMALL.replace(
    ssl_steps=1,
    ssl_batch=4,
    lam_steps=1,
    lam_batch=4,
    policy_steps=1,
    policy_batch=4,
    idm_updates=1,
    decoder_updates=1,
    policy_updates=1,
    online_batch=4,
    num_envs=2,
    num_steps=2,
    seed_steps=2,
)
VIDEOS = bcvlr.make_expert_videos(GRID, 2, seed=0)
DATA = bcvlr.expert_dataset(GRID, 2, seed=0)
ENC = bcvlr.Encoder(SMALL)
G = torch.Generator().manual_seed(0)
OBS = np.full((2, 32, 32, 3), 128.0, dtype=np.float32)  # pixel values 0-255
AGENT = {"obs_shape": (3, 32, 32), "action_space": SPACE, "config": TINY, "seed": 0}
AGENT_BAD = {
    "obs_shape": [(3, 32), (1, 32, 32), (3, 4, 4)],
    "action_space": [gym.spaces.MultiDiscrete([2, 2])],
    "config": ["small"],
    "seed": [-1],
}
ONLINE = {"env": fresh(lambda: gym.make(GRID)), "budget_steps": 4}
ONLINE_BAD = {
    "budget_steps": [0, -3, 10**9],
    "env": [gym.make(POINT), bcvlr.PixelGridReach(grid=4), "not an env"],
}
NETS = {"encoder": ENC, "frame_hw": (32, 32), "config": SMALL}
NETS_BAD = {"encoder": [torch.nn.Linear(2, 2)], "frame_hw": [(4, 4), (32,)], "config": [3]}


def _pretrained(agent):
    agent.pretrain(VIDEOS)


SUITE = BadInputs(
    bcvlr,
    [
        Call(
            bcvlr.BCVLR,
            **AGENT,
            call={"videos": VIDEOS},
            method="pretrain",
            shapes={"videos": "N T 3 32 32"},
            bad={**AGENT_BAD, "videos": [VIDEOS[:, :2]]},
        ),
        Call(
            bcvlr.LAPO, **AGENT, call=ONLINE, method="online", prepare=_pretrained, bad=ONLINE_BAD
        ),
        Call(
            bcvlr.BCVLR,
            **AGENT,
            call={"obs": OBS},
            method="act",
            name="BCVLR.act",
            shapes={"obs": "B 32 32 3"},
            accepts={"obs": {"rank"}},
        ),  # one image or a batch
        Call(
            bcvlr.BCO,
            **AGENT,
            idm_lr_bco=1e-3,
            call=ONLINE,
            method="online",
            prepare=_pretrained,
            bad={**ONLINE_BAD, "idm_lr_bco": [0.0, 2.0]},
        ),
        Call(
            bcvlr.PPO,
            **AGENT,
            lr=5e-4,
            call=ONLINE,
            method="learn",
            bad={
                "lr": [0.0, 5.0],
                "budget_steps": [0],
                "env": [gym.make(POINT)],
                "action_space": [gym.spaces.Box(-1, 1, (2,))],
            },
        ),
        Call(
            bcvlr.BCWithActions,
            **AGENT,
            call={"data": DATA, "steps": 1, "lr": 1e-3, "batch": 4},
            method="fit",
            bad={"steps": [0], "lr": [0.0, 2.0], "batch": [0], "data": [VIDEOS]},
        ),
        Call(
            bcvlr.BCVLRConfig,
            ssl_steps=300,
            lam_lr=1e-3,
            decay=0.999,
            impala_channels=(8, 16, 16),
            enc_stride=2,
            bad={
                "ssl_steps": [-1],
                "lam_lr": [-1.0],
                "decay": [1.5],
                "enc_stride": [3],
                "impala_channels": [(), (0, 4)],
            },
        ),
        Call(
            bcvlr.Encoder,
            config=SMALL,
            call={"o": torch.rand(2, 3, 32, 32, generator=G)},
            shapes={"o": "B 3 H W"},
            bad={"config": ["paper"]},
        ),
        Call(
            bcvlr.InverseDynamics,
            **NETS,
            call={"clip": torch.rand(2, 3, 3, 32, 32)},
            shapes={"clip": "B 3 3 32 32"},
            bad=NETS_BAD,
        ),
        Call(
            bcvlr.ForwardModel,
            **NETS,
            call={"feats_prev": torch.rand(2, 2, 8, 16, 16), "la_q": torch.rand(2, 32)},
            shapes={"feats_prev": "B 2 8 16 16", "la_q": "B 32"},
            bad=NETS_BAD,
        ),
        Call(
            bcvlr.LatentPolicy,
            **NETS,
            call={"o": torch.rand(2, 3, 32, 32)},
            shapes={"o": "B 3 32 32"},
            bad=NETS_BAD,
        ),
        Call(
            bcvlr.ActionDecoder,
            d_la=32,
            out_dim=5,
            hidden=(16, 8),
            call={"la": torch.randn(3, 32)},
            shapes={"la": "B 32"},
            accepts={"hidden": {"empty"}},
            bad={"d_la": [0], "out_dim": [0], "hidden": [(0,)]},
        ),
        Call(
            bcvlr.VQEmbeddingEMA,
            num_codebooks=2,
            num_embs=8,
            emb_dim=4,
            num_latents=2,
            commitment=0.05,
            decay=0.99,
            call={"x": torch.randn(3, 16)},
            shapes={"x": "B 16"},
            bad={"num_embs": [0], "decay": [1.0, -0.1], "commitment": [-1.0]},
        ),
        Call(
            bcvlr.contrastive_loss,
            z=torch.randn(4, 6),
            z_target=torch.randn(4, 6),
            predictor=torch.nn.Identity(),
            W=torch.nn.Identity(),
            shapes={"z": "B P", "z_target": "B P"},
            bad={"predictor": [3], "W": ["W"]},
        ),
        Call(
            bcvlr.random_shift,
            o=torch.rand(2, 3, 8, 8),
            pad=1,
            generator=None,
            bad={"pad": [-1, 100], "generator": [3]},
        ),
        Call(
            bcvlr.evaluate_policy,
            act=lambda f: np.zeros(len(f), dtype=np.int64),
            env=GRID,
            episodes=2,
            seed=0,
            bad={"episodes": [0, 10**7], "act": [3], "seed": [-1]},
        ),
        Call(
            bcvlr.random_policy, env=GRID, episodes=2, seed=0, bad={"episodes": [0], "seed": [-1]}
        ),
        Call(
            bcvlr.expert_dataset,
            env_id=GRID,
            episodes=1,
            seed=0,
            bad={"episodes": [0, 10**7], "seed": [-1]},
        ),
        Call(
            bcvlr.make_expert_videos,
            env_id=GRID,
            episodes=1,
            seed=0,
            bad={"episodes": [0], "seed": [-1]},
        ),
        Call(bcvlr.make_vector_env, env_id=GRID, num_envs=2, bad={"num_envs": [0, 10**6]}),
        Call(
            bcvlr.PixelGridReach,
            grid=8,
            cell=4,
            walls=2,
            horizon=40,
            bad={"grid": [2], "cell": [0], "walls": [-1, 100], "horizon": [0]},
        ),
        Call(
            bcvlr.PixelPointReach,
            size=32,
            speed=0.1,
            radius=0.08,
            horizon=40,
            bad={"size": [4], "speed": [0.0, 2.0], "radius": [0.0], "horizon": [0]},
        ),
    ],
    exempt={
        "EvalPoint": "a frozen record of results, built by the online loop",
        "EvalResult": "a frozen record of results, built by evaluate_policy",
        "ExpertData": "a named tuple of tensors, built by expert_dataset",
        "LatentAction": "a named tuple of tensors, built by InverseDynamics",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
