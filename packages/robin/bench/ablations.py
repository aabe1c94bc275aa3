"""Ablations behind the README's "What we tried" (ROBIN Sec. 4.3 in shape), on the full
reproduction's data (30 x 5 beam, 24 / 6 trajectories of 40 steps, latent 32, batch 8):

  base     ROBIN as in ``robin reproduce`` (K = 10, shared levels, 500 steps), each test rollout
           repeated with 3 noise seeds, sequential DDPM and ROBI
  unshared share_levels=False
  k20      K = 20 denoising steps
  long     1000 training steps (twice the budget of the reproduction)

Usage: ``python bench/ablations.py PART [PART ...] --out DIR`` (one JSON per part).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from robin import (
    ROBIN,
    fit,
    make_bending_beam_dataset,
    robi_rollout,
    rollout_rmse,
    sequential_rollout,
)

PARTS = {
    "base": {"share_levels": True, "num_steps": 10, "train_steps": 500, "seeds": 3},
    "unshared": {"share_levels": False, "num_steps": 10, "train_steps": 500, "seeds": 1},
    "k20": {"share_levels": True, "num_steps": 20, "train_steps": 500, "seeds": 1},
    "long": {"share_levels": True, "num_steps": 10, "train_steps": 1000, "seeds": 1},
}


def run(part: str) -> dict:
    cfg = PARTS[part]
    trajs = make_bending_beam_dataset(30, 40, nx=30, ny=5, seed=0)
    train, test = trajs[:24], trajs[24:]
    torch.manual_seed(0)
    sim = ROBIN(latent=32, blocks_per_level=2, levels=3, share_levels=cfg["share_levels"],
                num_steps=cfg["num_steps"])  # fmt: skip
    c0 = time.process_time()
    losses = fit(sim, train, cfg["train_steps"], 8, 1e-3, 0)
    out = {"part": part, **cfg, "train_cpu_s": time.process_time() - c0,
           "final_loss": float(np.mean(losses[-20:]))}  # fmt: skip
    for name, roll in (("sequential", sequential_rollout), ("robi", robi_rollout)):
        errs, nfe, cpu = [], [], []
        for s in range(cfg["seeds"]):
            for i, traj in enumerate(test):
                c0 = time.process_time()
                pred, info = roll(
                    sim, traj, 40, generator=torch.Generator().manual_seed(100 * s + i)
                )
                cpu.append(time.process_time() - c0)
                errs.append(rollout_rmse(pred[1:], traj.u[1:]))
                nfe.append(info["nfe"])
        out[name] = {
            "rmse_all": float(np.mean([e["rmse_all"] for e in errs])),
            "rmse_all_per_seed": [
                float(np.mean([e["rmse_all"] for e in errs[s * 6 : (s + 1) * 6]]))
                for s in range(cfg["seeds"])
            ],
            "rmse_last": float(np.mean([e["rmse_last"] for e in errs])),
            "calls": int(np.mean(nfe)),
            "cpu_s_per_rollout": float(np.mean(cpu)),
        }
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="+", choices=sorted(PARTS))
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for part in args.parts:
        result = run(part)
        print(json.dumps(result, indent=1))
        (Path(args.out) / f"ablation_{part}.json").write_text(json.dumps(result, indent=1))
