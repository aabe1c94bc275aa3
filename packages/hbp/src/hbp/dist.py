r"""Data-parallel steps with the Ave-Token loss, in one process and through torch.distributed.

One optimizer step over R ranks, where rank r trains the packs :math:`P_{r,1},\dots,P_{r,G_r}` one
per micro-step (gradient accumulation) and DDP averages the accumulated gradients over R:

.. math:: g = \frac1R\sum_r\sum_j \nabla \mathcal L(P_{r,j}).

With :func:`~hbp.loss.ave_token_loss` (:math:`N_{glob}` from one all-reduce), :math:`g` equals the
gradient of the global token mean :math:`\sum_{all}\ell_t/N_{glob}` for *any* split of the samples
into packs, ranks and micro-steps; with :func:`~hbp.loss.mean_loss` it does not.

- :func:`step_gradient` emulates that step in one process (the default tests use it);
- :func:`run_ddp_demo` runs it for real: ``world_size`` processes, gloo backend on the CPU,
  ``DistributedDataParallel`` with ``no_sync`` for the accumulation micro-steps.
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

from hbp.batching import balance_ranks, round_robin
from hbp.collate import pack_collate
from hbp.cost import CostModel
from hbp.data import nonempty_list
from hbp.loss import ave_token_loss, mean_loss
from hbp.model import TinyCausalLM
from hbp.packing import flat_packs, greedy_fill, naive_pack
from paperkit import (
    Described,
    check_choice,
    check_int,
    check_memory,
    check_tensor,
    describe,
    param_error,
)

__all__ = [
    "PROCESS_BYTES",
    "demo_problem",
    "flat_grad",
    "free_port",
    "global_mean_gradient",
    "join_group",
    "run_ddp_demo",
    "step_gradient",
]

#: Memory one spawned gloo process needs (the Python interpreter with torch imported, about
#: 0.3-0.4 GB resident on Linux, rounded up).
PROCESS_BYTES = 2**29


def free_port() -> int:
    """A free TCP port on this machine for a local ``env://`` rendezvous."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def join_group(rank: int, world_size: int, port: int) -> None:
    """Join a gloo group through the standard ``env://`` rendezvous (``MASTER_ADDR`` /
    ``MASTER_PORT``), as a process started by ``torchrun`` would; for the local demos."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world_size)


Loss = Literal["ave_token", "mean"]


def flat_grad(model: torch.nn.Module) -> torch.Tensor:
    """All parameter gradients, concatenated."""
    return torch.cat([p.grad.reshape(-1) for p in model.parameters()])


def _micro_loss(
    model: torch.nn.Module,
    samples: Sequence[torch.Tensor],
    pack: Sequence[int],
    loss: str,
    n_glob: int,
    dp: int,
) -> torch.Tensor:
    batch = pack_collate([samples[i] for i in pack])
    token_loss = model.token_loss(batch)
    if loss == "ave_token":
        return ave_token_loss(token_loss, batch.loss_mask, n_glob, dp)
    return mean_loss(token_loss, batch.loss_mask)


def _loss_tokens(samples: Sequence[torch.Tensor], packs: Sequence[Sequence[int]]) -> int:
    return sum(int(samples[i].numel()) - 1 for p in packs for i in p)


def step_gradient(
    model: torch.nn.Module,
    samples: Sequence[torch.Tensor],
    packs_per_rank: Sequence[Sequence[Sequence[int]]],
    loss: Loss = "ave_token",
) -> torch.Tensor:
    r"""The DDP step's gradient :math:`\frac1R\sum_r\sum_j\nabla\mathcal L(P_{r,j})`, emulated.

    ``model``: a :class:`~hbp.model.TinyCausalLM`; ``samples``: 1-D token tensors with ids in
    ``[0, vocab)``, at most ``max_len`` tokens each; ``packs_per_rank``: per rank, a list of packs
    (non-empty lists of sample indices; a rank may have none) holding at least one scored token
    in all. Integer inputs, so NaN cannot occur; NaN in the model's weights propagates.
    """
    owner = "step_gradient"
    check_choice("loss", owner, loss, ("ave_token", "mean"))
    _model_and_samples(owner, model, samples)
    nonempty_list("packs_per_rank", owner, packs_per_rank, "lists of packs (one per rank)")
    for packs in packs_per_rank:
        if not isinstance(packs, Sequence) or len(packs):
            flat_packs("packs_per_rank", owner, packs, len(samples))
    R = len(packs_per_rank)
    n_glob = sum(_loss_tokens(samples, packs) for packs in packs_per_rank)
    if n_glob < 1:
        raise param_error(
            "packs_per_rank",
            owner,
            "packs holding a sample of 2 tokens or more",
            Described("no scored token"),
        )
    model.zero_grad(set_to_none=True)
    total = None
    for packs in packs_per_rank:
        if not packs:
            continue
        for pack in packs:
            _micro_loss(model, samples, pack, loss, n_glob, R).backward()
        g = flat_grad(model)
        total = g.clone() if total is None else total + g
        model.zero_grad(set_to_none=True)
    return total / R


def _model_and_samples(owner: str, model: Any, samples: Any) -> None:
    if not isinstance(model, TinyCausalLM):
        raise param_error("model", owner, "a TinyCausalLM", describe(model), cls=TypeError)
    nonempty_list("samples", owner, samples, "1-D token tensors")
    for s in samples:
        check_tensor("samples", owner, s, ndim=1, dtype="int")
        lo, hi = int(s.min()), int(s.max())
        if lo < 0 or hi >= model.vocab:
            raise param_error(
                "samples", owner, f"token ids in [0, {model.vocab})", lo if lo < 0 else hi
            )
        if s.numel() > model.max_len:
            raise param_error(
                "samples", owner, f"at most max_len = {model.max_len} tokens each", s.numel()
            )


def global_mean_gradient(model: torch.nn.Module, samples: Sequence[torch.Tensor]) -> torch.Tensor:
    """Reference: the gradient of the mean loss over every scored token, one sample at a time."""
    model.zero_grad(set_to_none=True)
    n = _loss_tokens(samples, [list(range(len(samples)))])
    for s in samples:
        batch = pack_collate([s])
        (model.token_loss(batch).sum() / n).backward()
    g = flat_grad(model).clone()
    model.zero_grad(set_to_none=True)
    return g


def demo_problem(
    seed: int = 0, n: int = 12, vocab: int = 32
) -> tuple[list[torch.Tensor], np.ndarray]:
    """``n`` random token sequences of lengths 2..40 and their lengths (``n, vocab >= 1``)."""
    owner = "demo_problem"
    seed = check_int("seed", owner, seed, low=0)
    n = check_int("n", owner, n, low=1)
    vocab = check_int("vocab", owner, vocab, low=1)
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 41, size=n)
    samples = [torch.from_numpy(rng.integers(0, vocab, size=int(m))) for m in lengths]
    return samples, lengths


def demo_packings(lengths: np.ndarray, world_size: int) -> dict[str, list[list[list[int]]]]:
    """Two splits of the same samples over ``world_size`` ranks: naive 64-token packs dealt
    round-robin, and GreedyFill 96-token packs balanced by LPT."""
    naive = naive_pack(lengths, 64)
    greedy = greedy_fill(lengths, 96)
    lpt = balance_ranks(greedy, lengths, world_size, CostModel.preset("8b"))
    return {
        "naive/round-robin": [[naive[i] for i in r] for r in round_robin(len(naive), world_size)],
        "greedy/LPT": [[greedy[i] for i in r] for r in lpt],
    }


def _worker(rank: int, world_size: int, port: int, seed: int, out: str) -> None:
    join_group(rank, world_size, port)
    try:
        torch.manual_seed(seed)
        model = TinyCausalLM(vocab=32, dim=32, depth=1, heads=2, max_len=64).double()
        ddp = DistributedDataParallel(model)
        samples, lengths = demo_problem(seed)
        results = {}
        for name, split in demo_packings(lengths, world_size).items():
            for loss in ("ave_token", "mean"):
                mine = split[rank]
                count = torch.tensor([_loss_tokens(samples, mine)], dtype=torch.int64)
                dist.all_reduce(count)  # N_glob: one all-reduce before the step
                ddp.zero_grad(set_to_none=True)
                for j, pack in enumerate(mine):
                    last = j == len(mine) - 1
                    # DDP all-reduces (averages) the accumulated gradients after the last micro-step
                    with contextlib.nullcontext() if last else ddp.no_sync():
                        batch = pack_collate([samples[i] for i in pack])
                        logits = ddp(batch.input_ids, batch.position_ids, batch.cu_seqlens)
                        token_loss = F.cross_entropy(
                            logits.transpose(1, 2), batch.labels, reduction="none"
                        )
                        if loss == "ave_token":
                            micro = ave_token_loss(
                                token_loss, batch.loss_mask, int(count), world_size
                            )
                        else:
                            micro = mean_loss(token_loss, batch.loss_mask)
                        micro.backward()
                results[(name, loss)] = flat_grad(model).clone()
        torch.save(results, os.path.join(out, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def run_ddp_demo(world_size: int = 2, seed: int = 0) -> dict[str, Any]:
    """Run one Ave-Token and one mean-loss step under two packings on ``world_size`` gloo processes.

    Returns the largest absolute gradient differences: between ranks (DDP keeps them equal),
    between the two packings, and against :func:`global_mean_gradient`, for each loss.
    ``world_size`` processes must fit in memory (:data:`PROCESS_BYTES` each); ``seed`` >= 0.
    """
    owner = "run_ddp_demo"
    world_size = check_int("world_size", owner, world_size, low=1)
    check_memory("world_size", owner, world_size, PROCESS_BYTES * world_size)
    seed = check_int("seed", owner, seed, low=0)
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_worker, args=(world_size, free_port(), seed, tmp), nprocs=world_size, join=True)
        per_rank = [torch.load(os.path.join(tmp, f"rank{r}.pt")) for r in range(world_size)]
    torch.manual_seed(seed)
    model = TinyCausalLM(vocab=32, dim=32, depth=1, heads=2, max_len=64).double()
    samples, _ = demo_problem(seed)
    reference = global_mean_gradient(model, samples)
    grads = per_rank[0]
    names = sorted({name for name, _ in grads})
    out: dict[str, Any] = {"world_size": world_size, "packings": names}
    out["max_diff_between_ranks"] = max(
        float((r[key] - grads[key]).abs().max()) for r in per_rank for key in grads
    )
    for loss in ("ave_token", "mean"):
        a, b = (grads[(n, loss)] for n in names)
        out[f"{loss}: packing A vs B"] = float((a - b).abs().max())
        out[f"{loss}: vs global token mean"] = max(
            float((grads[(n, loss)] - reference).abs().max()) for n in names
        )
    return out
