"""The kernels gate of the causal linear-attention kernels: Triton's offline compile for sm_90
(Hopper) of every launch configuration the dispatchers (:func:`doflinattn.kernels.feature_plan`,
:func:`doflinattn.kernels.hedgehog_plan`) can pick, without a GPU, held to sm_90's shared memory
and to no register spills (:mod:`paperkit.kernel_gate`).

``python -m doflinattn.kernels.offline`` prints one table row per configuration (kernel, dtype,
blocks, warps, stages, registers, spill bytes, stack bytes, shared bytes; ``--json`` for JSON
lines) and exits with status 1 when one breaks its budget. It must run without
``TRITON_INTERPRET`` (the interpreter replaces the compiler); ``uvx nox -s kernels`` runs it.
"""

from __future__ import annotations

import torch

from doflinattn.kernels import (
    BLOCK_E,
    CHUNK,
    MAX_FEATURE_BLOCK,
    MAX_HEAD_BLOCK,
    MAX_HEDGEHOG_BLOCK,
    TRITON_DTYPES,
    feature_plan,
    hedgehog_plan,
)
from paperkit.kernel_gate import TritonConfig, main

__all__ = ["configurations", "feature_blocks", "hedgehog_blocks"]

_SHORT = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
_LAUNCH = ("num_warps", "num_stages", "grid")


def _sizes(largest: int) -> range:
    return range(1, largest + 1)


def feature_blocks(backward: bool = False) -> list[dict]:
    """Every distinct launch configuration :func:`feature_plan` returns for the forward (or the
    ``backward``) kernel, over every feature width it accepts (grid left out: it is a runtime
    value)."""
    plans = (
        feature_plan(torch.float32, m, BLOCK_E, 1, backward) for m in _sizes(MAX_FEATURE_BLOCK)
    )
    found = {tuple((k, v) for k, v in p.items() if k != "grid") for p in plans if p}
    return [dict(items) for items in sorted(found)]


def hedgehog_blocks() -> list[dict]:
    """Every distinct launch configuration :func:`hedgehog_plan` returns, over every head
    dimension and half feature width it accepts."""
    found = set()
    for d in _sizes(MAX_HEAD_BLOCK):
        for half in _sizes(MAX_HEDGEHOG_BLOCK):
            plan = hedgehog_plan(torch.float32, d, half, BLOCK_E, 1)
            if plan:
                found.add(tuple((k, v) for k, v in plan.items() if k != "grid"))
    return [dict(items) for items in sorted(found)]


def _split(plan: dict) -> tuple[dict, dict]:
    return {k: v for k, v in plan.items() if k not in _LAUNCH}, {
        k: plan[k] for k in ("num_warps", "num_stages")
    }


def _label(kernel: str, dtype: torch.dtype, consts: dict) -> dict:
    """One table row's name: kernel, dtype and its blocks in one column (the kernels' block
    names differ, and the gate's table takes its header from the first row)."""
    blocks = " ".join(f"{k}={v}" for k, v in consts.items())
    return {"kernel": kernel, "dtype": _SHORT[dtype], "blocks": blocks}


def configurations() -> list[TritonConfig]:
    """Every dtype times every block configuration of the three kernels: ``causal_fwd`` and
    ``causal_bwd`` (features; the backward's features and values come in one dtype, its
    gradients are fp32) and ``causal_fwd_hedgehog`` (W, b, KEEP and DEN fp32)."""
    from doflinattn.kernels import causal_jit

    assert CHUNK == 16
    configs = []
    for dtype in TRITON_DTYPES:
        t = "*" + _SHORT[dtype]
        fwd = dict(PQ=t, PK=t, V=t, O=t, DEN="*fp32", N="i32", MP="i32", E="i32", eps="fp32")
        bwd = dict(PQ=t, PK=t, V=t, DEN="*fp32", C="*fp32", DO=t)
        bwd |= dict(DPQ="*fp32", DPK="*fp32", DV="*fp32", N="i32", MP="i32", E="i32")
        bwd |= dict(eps="fp32", NCHUNK="i32")
        hog = dict(Q=t, K=t, W="*fp32", BIAS="*fp32", KEEP="*fp32", V=t, O=t, DEN="*fp32")
        hog |= dict(N="i32", H="i32", D="i32", MH="i32", E="i32", eps="fp32")
        for name, fn, sig, backward in (
            ("causal_fwd", causal_jit.causal_fwd, fwd, False),
            ("causal_bwd", causal_jit.causal_bwd, bwd, True),
        ):
            for plan in feature_blocks(backward):
                consts, launch = _split(plan)
                configs.append(TritonConfig(fn, sig, consts, _label(name, dtype, consts), **launch))
        for plan in hedgehog_blocks():
            consts, launch = _split(plan)
            label = _label("causal_fwd_hedgehog", dtype, consts)
            configs.append(
                TritonConfig(causal_jit.causal_fwd_hedgehog, hog, consts, label, **launch)
            )
    return configs


if __name__ == "__main__":
    raise SystemExit(main(configurations))
