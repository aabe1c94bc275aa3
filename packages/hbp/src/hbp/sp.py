r"""Sequence parallelism for one packed row through torch.distributed (all-gather of K and V).

The k devices of an SP group hold consecutive chunks of :math:`T/k` tokens of the packed row. Each
device projects its own queries, keys and values, all-gathers K and V over the group
(:class:`GatherSequence`: ``dist.all_gather`` forward; backward all-reduces the gradient of the
gathered tensor and keeps the own chunk, since gloo has no reduce-scatter) and attends from its
queries to every key under the block-diagonal causal mask of ``cu_seqlens``:

.. math:: o_i = \sum_{j\le i,\ s(j)=s(i)} \mathrm{softmax}_j(q_i^\top k_j/\sqrt d)\,v_j,
   \qquad i \in \text{own chunk},\ j \in [0, T).

Per device this exchanges :math:`2(k-1)/k\cdot T d` values per layer forward, the
:math:`c_{comm}\,t\,(k-1)/k` term of the cost model. :func:`run_sp_demo` checks it against
single-device varlen attention on gloo processes.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

from hbp.collate import block_diagonal_mask
from hbp.dist import PROCESS_BYTES, free_port, join_group
from hbp.model import checked_qkv, varlen_attention
from paperkit import Described, check_int, check_memory, describe, param_error

__all__ = ["GatherSequence", "run_sp_demo", "sp_attention"]


class GatherSequence(torch.autograd.Function):
    r"""Differentiable all-gather along the sequence dimension (dim 2) of an SP group.

    Forward :math:`y = [x_0; \dots; x_{k-1}]`; backward
    :math:`\partial L/\partial x_r = (\sum_{r'} \partial L_{r'}/\partial y)_{\text{chunk } r}`.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, group: dist.ProcessGroup | None) -> torch.Tensor:
        ctx.group = group
        ctx.rank, ctx.chunk = dist.get_rank(group), x.shape[2]
        parts = [torch.empty_like(x) for _ in range(dist.get_world_size(group))]
        dist.all_gather(parts, x.contiguous(), group=group)
        return torch.cat(parts, dim=2)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        grad = grad.contiguous()
        dist.all_reduce(grad, group=ctx.group)
        own = slice(ctx.rank * ctx.chunk, (ctx.rank + 1) * ctx.chunk)
        return grad[:, :, own].contiguous(), None


def sp_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cu_seqlens: torch.Tensor,
    group: dist.ProcessGroup | None = None,
) -> torch.Tensor:
    """Causal varlen attention of this device's chunk of the packed row.

    Shapes:
        q, k: (B, H, C, d) and v: (B, H, C, e), this device's chunk of C = T / k tokens;
        cu_seqlens: (n + 1,) offsets of the whole row (:func:`hbp.collate.cu_seqlens_checked`),
        ending at T = C * k; output (B, H, C, e).

    ``group`` is a process group of an initialised ``torch.distributed`` (None: the default
    group). q, k, v share one dtype and device; NaN or inf in them is refused (ValueError). The
    (C, T) scores and the (T, T) mask must fit in memory.
    """
    owner = "sp_attention"
    if not (dist.is_available() and dist.is_initialized()):
        raise param_error(
            "group",
            owner,
            "a process group of an initialised torch.distributed (call init_process_group)",
            Described("no initialised process group"),
        )
    if group is not None and not isinstance(group, dist.ProcessGroup):
        raise param_error("group", owner, "a ProcessGroup or None", describe(group), cls=TypeError)
    world = dist.get_world_size(group)
    rank = dist.get_rank(group)
    chunk = q.shape[2] if isinstance(q, torch.Tensor) and q.ndim == 4 else 0
    checked_qkv(owner, q, k, v, cu_seqlens, total=chunk * world)
    total = chunk * world
    scores = 3 * q.shape[0] * q.shape[1] * chunk * total * q.element_size()
    check_memory("cu_seqlens", owner, Described(f"T = {total}"), 3 * total**2 + scores)
    keys = GatherSequence.apply(k, group)
    values = GatherSequence.apply(v, group)
    mask = block_diagonal_mask(cu_seqlens)[rank * chunk : (rank + 1) * chunk]
    return F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)


def _demo_inputs(seed: int, total: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 2, total, 8, generator=g, dtype=torch.float64) for _ in range(3))
    weight = torch.randn(1, 2, total, 8, generator=g, dtype=torch.float64)
    return q, k, v, weight


def _worker(rank: int, world: int, port: int, seed: int, cu: list[int], out: str) -> None:
    join_group(rank, world, port)
    try:
        total = cu[-1]
        chunk = total // world
        q, k, v, weight = _demo_inputs(seed, total)
        own = slice(rank * chunk, (rank + 1) * chunk)
        ql, kl, vl = (x[:, :, own].clone().requires_grad_() for x in (q, k, v))
        o = sp_attention(ql, kl, vl, torch.tensor(cu))
        (o * weight[:, :, own]).sum().backward()
        torch.save(
            {"o": o.detach(), "dq": ql.grad, "dk": kl.grad, "dv": vl.grad},
            os.path.join(out, f"rank{rank}.pt"),
        )
    finally:
        dist.destroy_process_group()


def run_sp_demo(world_size: int = 2, seed: int = 0) -> dict[str, Any]:
    """Sequence-parallel attention on ``world_size`` gloo processes vs one device (fp64).

    Samples of lengths 5, 11, 3, 13 (one crosses the chunk boundary) are packed into 32 tokens;
    returns the largest absolute differences of the output and of dq, dk, dv. ``world_size``
    divides 32; ``seed`` >= 0 (both checked before any process starts).
    """
    owner = "run_sp_demo"
    world_size = check_int("world_size", owner, world_size, low=1)
    seed = check_int("seed", owner, seed, low=0)
    cu = [0, 5, 16, 19, 32]
    if cu[-1] % world_size:
        raise param_error("world_size", owner, "a divisor of 32", world_size)
    check_memory("world_size", owner, world_size, PROCESS_BYTES * world_size)
    with tempfile.TemporaryDirectory() as tmp:
        args = (world_size, free_port(), seed, cu, tmp)
        mp.spawn(_worker, args=args, nprocs=world_size, join=True)
        parts = [torch.load(os.path.join(tmp, f"rank{r}.pt")) for r in range(world_size)]
    q, k, v, weight = (x.requires_grad_(i < 3) for i, x in enumerate(_demo_inputs(seed, cu[-1])))
    o = varlen_attention(q, k, v, torch.tensor(cu))
    (o * weight).sum().backward()
    reference = {"o": o.detach(), "dq": q.grad, "dk": k.grad, "dv": v.grad}
    return {
        name: float((torch.cat([p[name] for p in parts], dim=2) - ref).abs().max())
        for name, ref in reference.items()
    }
