r"""The headline experiments at small scale: ``flashbias reproduce [--quick] [--seed N]``.

(a) Exactness: causal ALiBi (N=300, H=8) and the spatial-distance bias on 3-D points (as in the
    PDE solver), max :math:`|\Delta O|` of FlashBias against the dense reference, fp64 and fp32.
(b) SVD: the SwinV2-like continuous position bias for 8x8 and 12x12 windows (N=64/144, 4 heads):
    the rank at 99.5% energy and the relative output error against R; the same for the
    bidirectional ALiBi, which is not low-rank.
(c) Neural decomposition of an AF3-like pair bias (n=128, c_z=16, H=4), R in {8, 16, 32}:
    relative bias and output error after fitting the factoriser.
(d) Speed and peak memory of dense-bias SDPA against FlashBias (sdpa) on the CPU, fwd and fwd+bwd.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from flashbias.attention import dense_bias_attention, flash_bias_attention
from flashbias.bench import ratios, speed_memory
from flashbias.data import pair_bias, swin_cpb_bias
from flashbias.decompose import (
    NeuralFactorizer,
    alibi_bias,
    alibi_factors,
    distance_factors,
    factors_to_dense,
    svd_factors,
)
from paperkit import figure, print_table, progress, save_figure

__all__ = ["exactness", "neural_errors", "reproduce", "svd_errors"]

D_HEAD = 32


def _qkv(B: int, N: int, H: int, seed: int, dtype=torch.float64) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, N, H, D_HEAD, generator=g, dtype=dtype) for _ in range(3)]


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm())


def exactness(seed: int) -> list[dict[str, Any]]:
    """Max output difference of FlashBias (sdpa backend) against the dense reference."""
    rows = []
    N, H = 300, 8
    q, k, v = _qkv(1, N, H, seed)
    q_b, k_b = alibi_factors(N, H)
    ref = dense_bias_attention(q, k, v, alibi_bias(N, H), causal=True)
    g = torch.Generator().manual_seed(seed + 1)
    x, y = torch.rand(1, N, 3, generator=g, dtype=torch.float64), None
    y = torch.rand(1, N, 3, generator=g, dtype=torch.float64)
    w = torch.linspace(0.5, 4.0, H, dtype=torch.float64)
    dist = -w[:, None, None] * torch.cdist(x, y)[:, None].pow(2)
    ref_d = dense_bias_attention(q, k, v, dist)
    for dtype in (torch.float64, torch.float32):
        c = [t.to(dtype) for t in (q, k, v)]
        out = flash_bias_attention(*c, q_b.to(dtype), k_b.to(dtype), causal=True, backend="sdpa")
        rows.append(
            {
                "bias": "ALiBi causal",
                "R": 2,
                "dtype": str(dtype)[6:],
                "max_abs_dO": float((out.double() - ref).abs().max()),
            }
        )
        for drop in (False, True):
            f_q, f_k = distance_factors(x.to(dtype), y.to(dtype), w.to(dtype), drop)
            out = flash_bias_attention(*c, f_q, f_k, backend="sdpa")
            rows.append(
                {
                    "bias": "distance 3-D" + (" (row const dropped)" if drop else ""),
                    "R": f_q.shape[-1],
                    "dtype": str(dtype)[6:],
                    "max_abs_dO": float((out.double() - ref_d).abs().max()),
                }
            )
    return rows


def svd_errors(
    seed: int, windows: tuple[int, ...] = (8, 12), heads: int = 4
) -> list[dict[str, Any]]:
    """Rank at 99.5% energy and relative output error against R for static biases."""
    rows = []
    cases = [(f"Swin CPB {w}x{w}", swin_cpb_bias(w, heads, seed)) for w in windows]
    n = windows[-1] ** 2
    cases.append((f"ALiBi bidirectional N={n}", alibi_bias(n, heads, causal=False)[0]))
    for name, bias in cases:
        N = bias.shape[-1]
        q, k, v = _qkv(1, N, heads, seed)
        ref = dense_bias_attention(q, k, v, bias[None])
        _, _, r995 = svd_factors(bias, energy=0.995)
        for R in sorted({1, 2, 4, 8, 16, 32, 64, r995} & set(range(1, N + 1))):
            q_b, k_b, _ = svd_factors(bias, rank=R)
            out = flash_bias_attention(q, k, v, q_b, k_b, backend="sdpa")
            rows.append(
                {
                    "bias": name,
                    "N": N,
                    "R": R,
                    "at_99.5%": r995 == R,
                    "rel_bias_err": _rel(factors_to_dense(q_b, k_b)[0], bias),
                    "rel_out_err": _rel(out, ref),
                }
            )
    return rows


def neural_errors(
    seed: int, steps: int, ranks: tuple[int, ...] = (8, 16, 32), n: int = 128
) -> list[dict[str, Any]]:
    """Fit a NeuralFactorizer per rank on the pair bias; relative bias and output errors."""
    data = pair_bias(n, 16, 4, seed)
    f_q, f_k = data.row_features(), data.col_features()
    q, k, v = (t.float() for t in _qkv(1, n, 4, seed))
    ref = dense_bias_attention(q, k, v, data.bias)
    rows = []
    for R in progress(ranks, "neural decomposition"):
        torch.manual_seed(seed)
        model = NeuralFactorizer(f_q.shape[-1], f_k.shape[-1], 4, rank=R)
        model.fit([(f_q, f_k)], lambda a, b: data.bias, steps=steps, lr=1e-3)
        with torch.no_grad():
            q_b, k_b = model(f_q, f_k)
            out = flash_bias_attention(q, k, v, q_b, k_b, backend="sdpa")
            rows.append(
                {
                    "R": R,
                    "steps": steps,
                    "rel_bias_err": _rel(factors_to_dense(q_b, k_b), data.bias),
                    "rel_out_err": _rel(out, ref),
                }
            )
    return rows


def _plot(svd: list[dict[str, Any]], speed: list[dict[str, Any]], path: Path) -> Path:
    fig, axes = figure(1, 2, size=(11, 4))
    axes = axes[0]
    for name in dict.fromkeys(r["bias"] for r in svd):
        sel = [r for r in svd if r["bias"] == name]
        axes[0].semilogy([r["R"] for r in sel], [r["rel_out_err"] for r in sel], "o-", label=name)
    axes[0].axhline(0.01, color="grey", ls=":")
    axes[0].set(xlabel="rank R", ylabel="relative output error", title="SVD factors")
    axes[0].legend(fontsize=7)
    for mode in ("fwd", "fwd+bwd"):
        for R in sorted({r["R"] for r in speed}):
            sel = [r for r in speed if r["mode"] == mode and r["R"] == R]
            if sel:
                axes[1].loglog(
                    [r["N"] for r in sel],
                    [r["memory_ratio"] for r in sel],
                    "o-",
                    label=f"memory {mode} R={R}",
                )
                axes[1].loglog(
                    [r["N"] for r in sel],
                    [r["speedup"] for r in sel],
                    "s--",
                    label=f"speed {mode} R={R}",
                )
    axes[1].axhline(1.0, color="grey", ls=":")
    axes[1].set(xlabel="N", ylabel="dense / FlashBias", title="CPU ratios")
    axes[1].legend(fontsize=6)
    return save_figure(fig, path)


def reproduce(
    *,
    quick: bool = False,
    seed: int = 0,
    out: Path,
    lengths: list[int] | None = None,
    neural_steps: int | None = None,
    neural_ranks: tuple[int, ...] = (8, 16, 32),
    min_run_time: float = 0.5,
) -> dict[str, Any]:
    """Run (a)-(d); print the tables, save ``flashbias.png``, return the results.

    ``lengths``, ``neural_steps``, ``neural_ranks`` and ``min_run_time`` (seconds per timing)
    override the sizes (for smoke tests).
    """
    results: dict[str, Any] = {"exactness": exactness(seed)}
    print_table(results["exactness"], title="(a) exact factors: max |O_flashbias - O_dense|")
    results["svd"] = svd_errors(seed)
    print_table(results["svd"], title="(b) SVD factors: error against rank")
    steps = neural_steps or (400 if quick else 800)
    results["neural"] = neural_errors(seed, steps, neural_ranks)
    print_table(results["neural"], title="(c) neural decomposition of the pair bias")
    if lengths is None:
        lengths = [512, 1024, 2048] if quick else [512, 1024, 2048, 4096]
    rows = speed_memory(lengths, [2, 16], ["dense", "flashbias"], "cpu", max(lengths), min_run_time)
    results["speed_memory"] = ratios(rows)
    print_table(results["speed_memory"], title="(d) dense-bias SDPA vs FlashBias (sdpa), CPU")
    results["plot"] = str(
        _plot(results["svd"], results["speed_memory"], Path(out) / "flashbias.png")
    )
    return results
