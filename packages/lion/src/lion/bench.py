"""Benchmark: inference time and peak memory of the three LION forms and softmax attention over N.

``lion bench [--quick] [--device cpu|cuda]`` runs LION-S (selective decays) in the ``attention``
(full masked, :math:`O(N^2d)`), ``rnn`` (:math:`O(Nd^2)`, :math:`O(d^2)` state) and ``chunk``
(pure torch, C = 64) forms, and torch's fused softmax attention (``F.scaled_dot_product_attention``,
non-causal) on the same ``(B, H, N, d)`` tensors; it reports the log-log slopes of time and memory
against N. On a CUDA device it adds the Triton chunk kernel (``triton``) and, when
flash-linear-attention is installed, its ``chunk_simple_gla`` run in both directions (``fla``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from lion import ops
from paperkit import (
    figure,
    loglog_slope,
    peak_memory,
    print_table,
    progress,
    save_figure,
    time_callable,
)

__all__ = ["bench", "fla_lion"]

B, H, D_HEAD, CHUNK = 1, 4, 16, 64


def fla_lion(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_lambda: torch.Tensor, eps: float = 1e-6
) -> torch.Tensor:
    r"""LION from flash-linear-attention's causal ``chunk_simple_gla`` run twice: forward with
    gates :math:`g_t=\log\lambda_{t-1}`, on the flipped sequence with the flipped, shifted gates,
    minus the diagonal; the ones column of ``v`` carries the denominator."""
    from fla.ops.simple_gla import chunk_simple_gla

    vv = F.pad(v, (0, 1), value=1.0)
    g_fwd = F.pad(log_lambda[..., :-1], (1, 0))
    g_bwd = F.pad(log_lambda.flip(-1)[..., :-1], (1, 0))

    def run(q_, k_, v_, g_):  # fla takes (B, N, H, d) and gates (B, N, H)
        o, _ = chunk_simple_gla(
            *(x.transpose(1, 2).contiguous() for x in (q_, k_, v_, g_)), scale=1.0
        )
        return o.transpose(1, 2)

    forward = run(q, k, vv, g_fwd)
    backward = run(q.flip(2), k.flip(2), vv.flip(2), g_bwd).flip(2)
    parts = forward + backward - (q * k).sum(-1, keepdim=True) * vv
    return ops.normalize(parts, eps)


def _inputs(n: int, device: str, dtype=torch.float32):
    g = torch.Generator(device="cpu").manual_seed(n)
    q, k = (F.normalize(torch.rand(B, H, n, D_HEAD, generator=g), dim=-1) for _ in range(2))
    v = torch.randn(B, H, n, D_HEAD, generator=g)
    ll = F.logsigmoid(torch.randn(B, H, n, generator=g) + 3)
    return tuple(x.to(device=device, dtype=dtype) for x in (q, k, v, ll))


def _runner(name: str, n: int, device: str) -> Callable[[], Any]:
    q, k, v, ll = _inputs(n, device)
    if name == "softmax":
        return lambda: F.scaled_dot_product_attention(q, k, v)
    if name == "attention":
        return lambda: ops.lion_full(q, k, v, ll)
    if name == "rnn":
        return lambda: ops.lion_rnn(q, k, v, ll)
    if name == "chunk":
        return lambda: ops.lion_chunk(q, k, v, ll, CHUNK)
    if name == "triton":
        from lion.kernels.chunk_triton import lion_chunk_triton_parts

        return lambda: ops.normalize(lion_chunk_triton_parts(q, k, v, ll, CHUNK), 1e-6)
    return lambda: fla_lion(q, k, v, ll)


def _fla_available() -> bool:
    try:
        import fla.ops.simple_gla  # noqa: F401
    except ImportError:
        return False
    return True


def bench(
    *, quick: bool = False, device: str = "cpu", out: Path, lengths: list[int] | None = None
) -> dict[str, Any]:
    """Time and peak memory of each form over N; slopes, ratios, a plot (``scaling.png``).

    ``lengths`` overrides the sequence lengths (for smoke tests).
    """
    on_gpu = device.startswith("cuda")
    if lengths is not None:
        limits = dict.fromkeys(["attention", "rnn", "chunk", "softmax"], max(lengths))
    elif on_gpu:
        lengths = (
            [1024, 2048, 4096, 8192, 16384] if quick else [1024, 2048, 4096, 8192, 16384, 32768]
        )
        limits = {"attention": 16384, "rnn": 2048, "chunk": 32768, "softmax": 32768}
        limits["triton"] = 32768
        if _fla_available():
            limits["fla"] = 32768
    else:
        lengths = [256, 512, 1024, 2048] if quick else [256, 512, 1024, 2048, 4096, 8192]
        top = lengths[-1]
        limits = {"attention": min(top, 4096), "rnn": 2048, "chunk": top, "softmax": top}
    torch.manual_seed(0)
    rows = []
    cases = [(name, n) for name in limits for n in lengths if limits[name] >= n]
    for name, n in progress(cases, "bench"):
        run = _runner(name, n, device)
        with torch.no_grad():
            timing = time_callable(
                run,
                label=name,
                sub_label=f"N={n}",
                device=device,
                min_run_time=0.2 if quick else 0.5,
            )
            memory = peak_memory(run, device=device)
        rows.append(
            {
                "form": name,
                "N": n,
                "ms": 1e3 * timing.median_s,
                "tokens_per_s": n * B / timing.median_s,
                "peak_MiB": memory / 2**20,
            }
        )
    print_table(rows, title=f"inference, LION-S, B={B}, H={H}, d={D_HEAD}, C={CHUNK}, {device}")
    summary = []
    for name in limits:
        mine = [r for r in rows if r["form"] == name]
        upper = mine[len(mine) // 2 - 1 :] if len(mine) >= 4 else mine
        sizes = [r["N"] for r in upper]
        summary.append(
            {
                "form": name,
                "time_slope": loglog_slope(sizes, [r["ms"] for r in upper]),
                "memory_slope": loglog_slope(sizes, [max(r["peak_MiB"], 1e-3) for r in upper]),
                "fitted N": f"{sizes[0]}-{sizes[-1]}",
            }
        )
    print_table(summary, title="log-log slopes of time and peak memory against N")
    ms = {(r["form"], r["N"]): r["ms"] for r in rows}
    mem = {(r["form"], r["N"]): r["peak_MiB"] for r in rows}
    fast = "triton" if on_gpu else "chunk"
    ratios = [
        {
            "N": n,
            f"attention/{fast} time": ms[("attention", n)] / ms[(fast, n)],
            f"softmax/{fast} time": ms[("softmax", n)] / ms[(fast, n)],
            f"attention/{fast} memory": mem[("attention", n)] / max(mem[(fast, n)], 1e-6),
            **({"fla/triton time": ms[("fla", n)] / ms[("triton", n)]} if "fla" in limits else {}),
        }
        for n in lengths
        if limits["attention"] >= n
    ]
    print_table(ratios, title="ratios in one run")

    fig, axes = figure(1, 2, size=(10, 4))
    ax_t, ax_m = axes[0]
    for name in limits:
        mine = [r for r in rows if r["form"] == name]
        ns = [r["N"] for r in mine]
        ax_t.loglog(ns, [r["ms"] for r in mine], "o-", label=name)
        ax_m.loglog(ns, [max(r["peak_MiB"], 1e-3) for r in mine], "o-", label=name)
    for ax in (ax_t, ax_m):
        ax.set_xscale("log", base=2)
    ax_t.set(xlabel="sequence length N", ylabel="forward (ms)", title=f"time ({device})")
    ax_m.set(xlabel="sequence length N", ylabel="peak memory (MiB)", title="peak memory")
    ax_t.legend()
    save_figure(fig, out / "scaling.png")
    return {
        "device": device,
        "shape": {"B": B, "H": H, "d": D_HEAD, "chunk": CHUNK},
        "rows": rows,
        "slopes": summary,
        "ratios": ratios,
    }
