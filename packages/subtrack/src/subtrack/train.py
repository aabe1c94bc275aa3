"""Training a LlamaForCausalLM with one optimizer arm, in one process or data-parallel.

One process: :func:`train` is what ``subtrack reproduce`` runs for every arm. Data-parallel:
launch the module with ``torchrun``, which sets the standard ``env://`` rendezvous variables
(``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``)::

    torchrun --nproc-per-node 2 -m subtrack.train --method SubTrack++ --steps 200 --out run.json
    # two machines, the same command on each (node-rank 0 and 1):
    torchrun --nnodes 2 --node-rank 0 --nproc-per-node 8 --master-addr HOST --master-port 29500 \\
        -m subtrack.train --method SubTrack++ --device cuda

Under a process group the model is wrapped in ``DistributedDataParallel``: every rank draws its
own ``batch`` sequences (generator ``seed + 1000 + rank``), DDP averages the gradients, and every
rank then takes the same optimizer step, so the subspace updates (SVD or geodesic step on the
averaged gradient) agree across ranks and the replicas stay identical. Rank 0 writes ``--out``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

from paperkit import check_choice, check_int, check_real, check_tensor, describe, param_error
from subtrack.data import ALPHABET, synthetic_corpus
from subtrack.model import tiny_llama
from subtrack.optimizer import SubTrackAdamW, make_param_groups, optimizer_state_bytes

__all__ = ["METHOD_GROUPS", "SUBSPACE", "batch_of", "lm_loss", "main", "train"]

SUBSPACE = {"subspace_lr": 10.0, "max_angle": 0.3}
METHOD_GROUPS: dict[str, dict[str, Any] | None] = {
    "AdamW": None,
    "GaLore": {"method": "galore"},
    "Fira": {"method": "fira"},
    "LDAdam-like": {"method": "ldadam"},
    "SubTrack-Grad": {
        "method": "subtrack",
        "projection_aware": False,
        "recovery_scaling": False,
        **SUBSPACE,
    },
    "SubTrack-Grad+PA": {
        "method": "subtrack",
        "projection_aware": True,
        "recovery_scaling": False,
        **SUBSPACE,
    },
    "SubTrack++": {"method": "subtrack", **SUBSPACE},  # +PA +RS
}


def batch_of(data: torch.Tensor, gen: torch.Generator, batch: int, ctx: int) -> torch.Tensor:
    """``batch`` random windows of ``ctx + 1`` tokens of ``data`` (inputs and shifted targets)."""
    starts = torch.randint(0, len(data) - ctx - 1, (batch,), generator=gen)
    return torch.stack([data[i : i + ctx + 1] for i in starts.tolist()])


def lm_loss(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy of ``model`` on windows ``x`` ``[B, ctx + 1]``."""
    return F.cross_entropy(model(x[:, :-1]).logits.flatten(0, 1), x[:, 1:].flatten())


def _world() -> tuple[int, int]:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def train(
    method: str,
    *,
    steps: int,
    seed: int,
    train_data: torch.Tensor,
    eval_batches: list[torch.Tensor],
    dim: int = 128,
    layers: int = 2,
    rank: int = 32,
    update_interval: int = 50,
    batch: int = 16,
    ctx: int = 64,
    lr: float = 1e-3,
    eval_every: int = 50,
    device: str | torch.device = "cpu",
) -> dict[str, Any]:
    """Train one model with ``method`` (a key of :data:`METHOD_GROUPS`); return its curves.

    lr follows 10 % linear warm-up then cosine decay to 0 over ``steps``. ``batch`` is per rank:
    under an initialised process group the global batch is ``batch x world_size``. The returned
    ``curve`` holds (step, training seconds, mean held-out loss over ``eval_batches``).
    """
    owner = "train"
    check_choice("method", owner, method, tuple(METHOD_GROUPS))
    steps = check_int("steps", owner, steps, low=1)
    seed = check_int("seed", owner, seed, low=0)
    train_data = check_tensor("train_data", owner, train_data, shape=("n",), dtype="int")
    if bool(((train_data < 0) | (train_data >= len(ALPHABET))).any()):
        raise param_error(
            "train_data", owner, f"token ids in [0, {len(ALPHABET)})", describe(train_data)
        )
    for name, value in (("dim", dim), ("layers", layers), ("rank", rank), ("batch", batch)):
        check_int(name, owner, value, low=1)
    ctx = check_int("ctx", owner, ctx, low=1, high=len(train_data) - 2)
    update_interval = check_int("update_interval", owner, update_interval, low=1)
    eval_every = check_int("eval_every", owner, eval_every, low=1)
    lr = check_real("lr", owner, lr, low=0.0, low_open=True)
    rank_id, world = _world()
    torch.manual_seed(seed)  # the same initial weights on every rank
    model = tiny_llama(len(ALPHABET), dim=dim, layers=layers, heads=4, ctx=ctx).to(device)
    extra = METHOD_GROUPS[method]
    groups: Any = (
        model.parameters()
        if extra is None
        else make_param_groups(model, rank, update_interval=update_interval, **extra)
    )
    opt = SubTrackAdamW(groups, lr=lr)
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda s: (
            (s + 1) / warmup
            if s < warmup
            else 0.5 * (1 + math.cos(math.pi * (s - warmup) / max(1, steps - warmup)))
        ),
    )
    trained = DistributedDataParallel(model) if world > 1 else model
    gen = torch.Generator().manual_seed(seed + 1000 + rank_id)

    def evaluate() -> float:
        with torch.no_grad():
            return float(np.mean([lm_loss(model, x.to(device)).item() for x in eval_batches]))

    curve: list[tuple[int, float, float]] = []
    wall = 0.0
    for step in range(steps):
        x = batch_of(train_data, gen, batch, ctx).to(device)
        start = time.perf_counter()
        loss = lm_loss(trained, x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        wall += time.perf_counter() - start
        if (step + 1) % eval_every == 0 or step + 1 == steps:
            curve.append((step + 1, wall, evaluate()))
    return {
        "method": method,
        "seed": seed,
        "world_size": world,
        "final_eval_loss": curve[-1][2],
        "curve": curve,
        "wall_s": wall,
        "tokens_per_s": steps * batch * ctx * world / wall,
        "subspace_s": opt.subspace_time_s,
        "state_bytes": optimizer_state_bytes(opt),
        "param_checksum": float(sum(p.detach().double().sum() for p in model.parameters())),
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m subtrack.train",
        description="Train a LlamaForCausalLM on the synthetic corpus with one optimizer arm; "
        "data-parallel when launched by torchrun.",
    )
    p.add_argument("--method", default="SubTrack++", choices=tuple(METHOD_GROUPS))
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--rank", type=int, default=32)
    p.add_argument("--update-interval", type=int, default=50)
    p.add_argument("--batch", type=int, default=16, help="sequences per rank and step")
    p.add_argument("--ctx", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--eval-every", type=int, default=50)
    p.add_argument("--n-tokens", type=int, default=200_000, help="corpus size (5%% held out)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (cuda uses LOCAL_RANK's GPU)")
    p.add_argument("--backend", default=None, help="gloo or nccl (default: nccl on cuda)")
    p.add_argument("--out", type=Path, default=None, help="JSON results, written by rank 0")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m subtrack.train`` and ``torchrun -m subtrack.train``."""
    args = _parser().parse_args(argv)
    device = torch.device(args.device)
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        if device.type == "cuda":
            device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
            torch.cuda.set_device(device)
        backend = args.backend or ("nccl" if device.type == "cuda" else "gloo")
        dist.init_process_group(backend, init_method="env://")
    try:
        corpus = synthetic_corpus(args.n_tokens, seed=args.seed)  # identical on every rank
        split = int(0.95 * len(corpus))
        eval_gen = torch.Generator().manual_seed(args.seed + 7)
        eval_batches = [batch_of(corpus[split:], eval_gen, 32, args.ctx) for _ in range(8)]
        result = train(
            args.method,
            steps=args.steps,
            seed=args.seed,
            train_data=corpus[:split],
            eval_batches=eval_batches,
            dim=args.dim,
            layers=args.layers,
            rank=args.rank,
            update_interval=args.update_interval,
            batch=args.batch,
            ctx=args.ctx,
            lr=args.lr,
            eval_every=args.eval_every,
            device=device,
        )
        checksums = [result["param_checksum"]]
        if distributed:
            checksums = [None] * dist.get_world_size()
            dist.all_gather_object(checksums, result["param_checksum"])
        result["param_checksums"] = checksums  # one per rank: equal when the replicas agree
        if _world()[0] == 0:
            print(
                f"{args.method}: held-out loss {result['final_eval_loss']:.4f} after "
                f"{args.steps} steps on {result['world_size']} process(es), "
                f"{result['tokens_per_s']:.0f} tokens/s"
            )
            if args.out is not None:
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(result, indent=1))
    finally:
        if distributed:
            dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
