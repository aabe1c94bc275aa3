"""Benchmark: inference time and peak memory of the LION backends and softmax attention over N.

``lion bench [--quick] [--device cpu|cuda]`` runs LION-S (selective decays) through
:func:`lion.lion_attention` with the ``reference`` (full masked, :math:`O(N^2d)`), ``rnn``
(:math:`O(Nd^2)`, :math:`O(d^2)` state) and ``chunk`` (torch, C = 64) backends, and torch's fused
softmax attention (``F.scaled_dot_product_attention``, non-causal) on the same ``(B, H, N, d)``
tensors. Every row is a :class:`paperkit.Measurement` (median seconds after a warm-up, peak
bytes); the report gives the log-log slopes of time (:func:`paperkit.scaling`) and memory against
N. On a CUDA device it adds the ``triton`` backend and, when flash-linear-attention is installed,
its ``chunk_simple_gla`` run in both directions (``fla``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from lion.ops import lion_attention
from lion.reference import normalize
from paperkit import (
    Claim,
    Measurement,
    Report,
    loglog_slope,
    measure,
    plot_scaling,
    print_table,
    progress,
    scaling,
    triton_available,
)

__all__ = ["bench", "fla_lion"]

B, H, D_HEAD, CHUNK = 1, 4, 16, 64


def fla_lion(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_lambda: torch.Tensor, eps: float = 1e-6
) -> torch.Tensor:
    r"""LION from flash-linear-attention's causal ``chunk_simple_gla`` run twice: forward with
    gates :math:`g_t=\log\lambda_{t-1}`, on the flipped sequence with the flipped, shifted gates,
    minus the diagonal; the ones column of ``v`` carries the denominator.

    Shapes: ``q, k, v (B, H, N, d)``, ``log_lambda (B, H, N)`` -> ``(B, H, N, d)``; checked
    inputs (a benchmark arm), NaN propagates.
    """
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
    return normalize(parts, eps)


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
    if name == "fla":
        return lambda: fla_lion(q, k, v, ll)
    return lambda: lion_attention(q, k, v, ll, backend=name, chunk_size=CHUNK)


def _fla_available() -> bool:
    try:
        import fla.ops.simple_gla  # noqa: F401
    except ImportError:
        return False
    return True


def _plan(quick: bool, on_gpu: bool, lengths: list[int] | None) -> tuple[list[int], dict]:
    """The lengths N and, per implementation, the largest N it runs at."""
    if lengths is not None:
        return lengths, dict.fromkeys(["reference", "rnn", "chunk", "softmax"], max(lengths))
    if on_gpu:
        lengths = [1024, 2048, 4096, 8192, 16384] + ([] if quick else [32768])
        limits = {"reference": 16384, "rnn": 2048, "chunk": 32768, "softmax": 32768}
        if triton_available():
            limits["triton"] = 32768
        if _fla_available():
            limits["fla"] = 32768
        return lengths, limits
    lengths = [256, 512, 1024, 2048] + ([] if quick else [4096, 8192])
    top = lengths[-1]
    return lengths, {"reference": min(top, 4096), "rnn": 2048, "chunk": top, "softmax": top}


def _memory_slope(rows: list[Measurement], impl: str) -> float | None:
    """Log-log slope of peak bytes against N over the upper half of ``impl``'s lengths with a
    peak above zero (None with fewer than two)."""
    mine = [r for r in rows if r.impl == impl and r.peak_bytes]
    upper = mine[len(mine) // 2 - 1 :] if len(mine) >= 4 else mine
    if len(upper) < 2:
        return None
    return loglog_slope([r.size for r in upper], [r.peak_bytes for r in upper])


def _claims(fits: dict[str, dict[str, Any]], memory: dict[str, float | None], fast: str) -> list:
    def slope(impl: str) -> float | None:
        return fits[impl]["slope"] if impl in fits else None

    ref, chunk, rnn = slope("reference"), slope("chunk"), slope("rnn")
    testable = None not in (ref, chunk, rnn)
    held = testable and ref >= 1.7 and chunk <= 1.3 and rnn <= 1.3
    mem = ", ".join(f"{k} {'—' if v is None else f'{v:.2f}'}" for k, v in memory.items())
    speedup = fits[fast].get("speedup_at_largest")
    largest = fits[fast]["sizes"][-1]
    found = [
        Claim(
            "The attention form costs O(N^2); the chunkwise and RNN forms are linear in N",
            paper="complexity of the three forms: O(N^2 d) full, O(N d^2) recurrent, O(N C d) "
            "chunkwise",
            measured=f"time slopes: reference {ref:.2f}, chunk {chunk:.2f}, rnn {rnn:.2f}; "
            f"memory slopes: {mem}"
            if testable
            else "fewer than two lengths per form",
            verdict=("held" if held else "not held") if testable else "not testable here",
            why="log-log slopes over the lengths run; held when the reference form's time slope "
            "is >= 1.7 and the chunk and RNN forms' <= 1.3",
        ),
        Claim(
            f"The {fast} backend is faster than the attention form at long sequences",
            paper="the chunkwise form is LION's fast path for long sequences",
            measured=f"{fast} vs reference at N = {largest}: x{speedup:.3g}"
            if speedup
            else "no common length",
            verdict=("held" if speedup > 1 else "not held") if speedup else "not testable here",
            why="median seconds of one forward, same inputs",
        ),
    ]
    if "triton" not in fits:
        found.append(
            Claim(
                "The Triton chunkwise kernel runs LION on a GPU",
                paper="GPU kernels for the chunkwise form",
                measured="no CUDA device in this run",
                verdict="not testable here",
                why="the kernel is checked under the Triton interpreter in the tests",
            )
        )
    return found


def bench(
    *, quick: bool = False, device: str = "cpu", out: Path, lengths: list[int] | None = None
) -> Report:
    """Time and peak memory of each backend over N; slopes, ratios, a plot (``scaling.png``).

    ``lengths`` overrides the sequence lengths (for smoke tests).
    """
    on_gpu = device.startswith("cuda")
    lengths, limits = _plan(quick, on_gpu, lengths)
    torch.manual_seed(0)
    rows: list[Measurement] = []
    cases = [(name, n) for name in limits for n in lengths if limits[name] >= n]
    for name, n in progress(cases, "bench"):
        run = _runner(name, n, device)
        with torch.no_grad():
            rows.append(
                measure(
                    name,
                    n,
                    run,
                    device=device,
                    case="forward",
                    params={"B": B, "H": H, "d": D_HEAD, "chunk": CHUNK},
                    min_time=0.2 if quick else 0.5,
                )
            )
    table = [
        {
            "form": r.impl,
            "N": r.size,
            "ms": 1e3 * r.seconds,
            "tokens_per_s": r.size * B / r.seconds,
            "peak_MiB": r.peak_bytes / 2**20,
        }
        for r in rows
    ]
    print_table(table, title=f"inference, LION-S, B={B}, H={H}, d={D_HEAD}, C={CHUNK}, {device}")
    fits = scaling(rows, baseline="reference")
    memory = {name: _memory_slope(rows, name) for name in limits}
    slopes = [
        {
            "form": name,
            "time_slope": fits[name]["slope"],
            "memory_slope": memory[name],
            "fitted N": f"{fits[name]['sizes'][0]}-{fits[name]['sizes'][-1]}",
        }
        for name in limits
    ]
    print_table(slopes, title="log-log slopes of time and peak memory against N")
    fast = "triton" if "triton" in limits else "chunk"
    seconds = {(r.impl, r.size): r.seconds for r in rows}
    peak = {(r.impl, r.size): r.peak_bytes for r in rows}
    ratios = [
        {
            "N": n,
            f"reference/{fast} time": seconds[("reference", n)] / seconds[(fast, n)],
            f"softmax/{fast} time": seconds[("softmax", n)] / seconds[(fast, n)],
            f"reference/{fast} memory": peak[("reference", n)] / max(peak[(fast, n)], 1),
            **(
                {"fla/triton time": seconds[("fla", n)] / seconds[("triton", n)]}
                if "fla" in limits
                else {}
            ),
        }
        for n in lengths
        if limits["reference"] >= n
    ]
    print_table(ratios, title="ratios in one run")
    figure = plot_scaling(
        rows, out / "scaling.png", title=f"forward, {device}", xlabel="sequence length N"
    )
    return Report(
        claims=_claims(fits, memory, fast),
        tables={"inference": table, "slopes": slopes, "ratios": ratios},
        figures=[figure],
        settings={
            "device": device,
            "shape": {"B": B, "H": H, "d": D_HEAD, "chunk": CHUNK},
            "lengths": lengths,
            "limits": limits,
            "decays": "LION-S, log sigmoid(z + 3), z ~ N(0, 1)",
        },
        measurements=rows,
    )
