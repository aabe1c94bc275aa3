"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite; the disconnected mesh is in test_hierarchy.py): levels < 1,
num_steps < 1, window > num_steps,
pos/edges mismatches (ValueError) and integer positions (TypeError) among them."""

import numpy as np
import torch

import robin
from paperkit.testing import BadInputs, Call, fresh

TRAJS = robin.make_bending_beam_dataset(3, 4, nx=10, ny=3, seed=0)
HIER = TRAJS[0].mesh.hierarchy
N, E = HIER.sizes[0], HIER.edge_index[0].shape[1]
POS = TRAJS[0].mesh.pos.double().numpy()
EDGES = HIER.edge_index[0].numpy()[:, : E // 2]
G = torch.Generator().manual_seed(0)
X = torch.randn(N, robin.node_dim(2), generator=G)
XE = torch.randn(E, robin.edge_dim(2), generator=G)
K_EMB = torch.randn(N, 8, generator=G)
BATCH = robin.step_batch(TRAJS, [(0, 1), (1, 2)])
SMALL = {"latent": 8}


def _sim():
    torch.manual_seed(0)
    s = robin.ROBIN(latent=8, blocks_per_level=1, levels=2, num_steps=5)
    s.set_normalization(TRAJS)
    return s


SIM = _sim()
NEXT = robin.MGNNextStep(latent=8, blocks=1)
NEXT.set_normalization(TRAJS)
B_K = torch.tensor([2, 5])
NOISE = torch.randn(2, N, 2, generator=G)

SUITE = BadInputs(
    robin,
    [
        Call(
            robin.build_amg_hierarchy,
            pos=POS,
            edges=EDGES,
            levels=2,
            theta=0.25,
            operator="laplacian",
            shapes={"pos": "N D", "edges": "2 E"},
            bad={
                "levels": [0, 21],
                "theta": [0.0, 1.0],
                "pos": [POS.astype(np.int64), POS[:, :0], np.concatenate([POS, POS[:1]])],
                "edges": [EDGES + N, np.concatenate([EDGES, [[0], [0]]], axis=1)],
            },
        ),
        Call(
            robin.AMPN,
            node_in=robin.node_dim(2),
            edge_in=robin.edge_dim(2),
            out_dim=2,
            latent=8,
            blocks_per_level=1,
            levels=2,
            share_levels=True,
            space_dim=2,
            call={"node_feat": X, "edge_feat": XE, "hier": fresh(lambda: HIER), "k_emb": K_EMB},
            shapes={"node_feat": "N 9", "edge_feat": "E 6", "k_emb": "N 8"},
            bad={
                "levels": [0],
                "latent": [0, 10**5],
                "blocks_per_level": [0],
                "space_dim": [4],
                "hier": [HIER.repeat(2), "hier"],
                "node_feat": [X[:-1]],
            },
        ),  # fmt: skip
        Call(
            robin.MGNProcessor,
            node_in=robin.node_dim(2),
            edge_in=robin.edge_dim(2),
            out_dim=2,
            latent=8,
            blocks=1,
            call={"node_feat": X, "edge_feat": XE, "hier": fresh(lambda: HIER), "k_emb": K_EMB},
            shapes={"node_feat": "N 9", "edge_feat": "E 6", "k_emb": "N 8"},
            bad={"blocks": [0], "node_in": [0], "edge_feat": [XE[:-2]]},
        ),
        Call(
            robin.DiffusionSimulator,
            backbone=fresh(lambda: robin.AMPN(9, 6, 2, latent=8, blocks_per_level=1, levels=2)),
            num_steps=5,
            schedule="cosine",
            predict="residual",
            call={"x_k": NOISE, "k": B_K, "cond": fresh(lambda: BATCH.cond)},
            method="denoise_step",
            shapes={"x_k": "B N 2", "k": "B"},
            bad={
                "num_steps": [0],
                "backbone": [torch.nn.Linear(2, 2)],
                "k": [B_K + 5],
                "cond": ["cond"],
            },
        ),  # fmt: skip
        Call(
            _sim,
            name="DiffusionSimulator.loss",
            call={"batch": fresh(lambda: BATCH), "k": B_K, "noise": NOISE},
            method="loss",
            shapes={"k": "B", "noise": "B N 2"},
            bad={"k": [B_K * 0], "batch": ["batch"]},
        ),
        Call(
            robin.ROBIN,
            dim=2,
            latent=8,
            blocks_per_level=1,
            levels=2,
            share_levels=False,
            num_steps=5,
            bad={"num_steps": [0], "levels": [0], "dim": [4]},
        ),  # fmt: skip
        Call(robin.MGNNextStep, dim=2, latent=8, blocks=1, bad={"blocks": [0], "latent": [0]}),
        Call(
            robin.AMPNNextStep,
            dim=2,
            latent=8,
            blocks_per_level=1,
            levels=2,
            share_levels=True,
            bad={"levels": [0]},
        ),  # fmt: skip
        Call(robin.MGNDiffusion, dim=2, latent=8, blocks=1, num_steps=3, bad={"num_steps": [0]}),
        Call(
            robin.NextStepSimulator,
            backbone=fresh(lambda: robin.MGNProcessor(7, 6, 2, latent=8, blocks=1)),
            predict="state",
            dim=2,
            call={"cond": fresh(lambda: BATCH.cond)},
            bad={"backbone": ["net"], "dim": [0], "cond": ["cond"]},
        ),
        Call(robin.cosine_alpha_bar, num_steps=5, s=0.008, bad={"num_steps": [0], "s": [-0.1]}),
        Call(robin.node_dim, dim=2, diffusion=True, bad={"dim": [0, 4]}),
        Call(robin.edge_dim, dim=2, bad={"dim": [0]}),
        Call(
            robin.step_batch,
            trajs=fresh(lambda: TRAJS),
            index=[(0, 1)],
            bad={"trajs": [[], ["t"]], "index": [[], [(0, 4)], [(5, 0)]]},
        ),  # fmt: skip
        Call(
            robin.fit,
            model=fresh(lambda: robin.MGNNextStep(latent=4, blocks=1)),
            trajs=fresh(lambda: TRAJS),
            steps=1,
            batch_size=2,
            lr=1e-3,
            seed=0,
            label="train",
            accepts={"label": {"choice"}},
            bad={
                "model": [torch.nn.Linear(2, 2)],
                "trajs": [[], ["x"]],
                "steps": [0],
                "batch_size": [0],
                "lr": [0.0, 2.0],
                "seed": [-1],
            },
        ),  # fmt: skip
        Call(
            robin.sequential_rollout,
            sim=fresh(lambda: NEXT),
            traj0=fresh(lambda: TRAJS[0]),
            steps=2,
            bad={"steps": [0, 5], "sim": [torch.nn.Linear(2, 2)], "traj0": ["t"]},
        ),  # fmt: skip
        Call(
            robin.robi_rollout,
            sim=fresh(lambda: SIM),
            traj0=fresh(lambda: TRAJS[0]),
            steps=3,
            window=5,
            bad={"steps": [0, 5], "window": [0, 6, 4], "sim": [NEXT], "traj0": ["t"]},
        ),  # fmt: skip
        Call(
            robin.rollout_rmse,
            pred=TRAJS[0].u,
            true=TRAJS[1].u,
            shapes={"pred": "T N D", "true": "T N D"},
        ),  # fmt: skip
        Call(
            robin.make_bending_beam_dataset,
            n_traj=1,
            steps=2,
            nx=6,
            ny=3,
            seed=0,
            bad={"n_traj": [0], "steps": [0], "nx": [3], "ny": [1], "seed": [-1]},
        ),  # fmt: skip
        Call(
            robin.beam_mesh, nx=6, ny=3, seed=0, levels=2, bad={"nx": [1], "ny": [1], "levels": [0]}
        ),  # fmt: skip
    ],
    exempt={
        "Cond": "a dataclass of tensors built by step_batch and the rollouts",
        "StepBatch": "a dataclass built by step_batch (checked there)",
        "Hierarchy": "a dataclass built by build_amg_hierarchy (checked there)",
        "Mesh": "a dataclass built by beam_mesh (checked there)",
        "Trajectory": "a dataclass built by make_bending_beam_dataset (checked there)",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
