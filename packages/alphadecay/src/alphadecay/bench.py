"""Cost of AlphaDecay's ESD pass: ``alphadecay bench [--quick] [--device cpu|cuda]``.

The only extra work of AlphaDecay is one ``svdvals`` per tracked matrix every ``update_every``
steps, :math:`O(\\sum_l m_l n_l \\min(m_l, n_l))`. Measured: (a) the time of one refresh
(:func:`alphadecay.module_alphas` over every tracked matrix) of LLaMA-shaped stacks over model
widths (log-log slope against ``d``), (b) the time of one training step of the same model and
the refresh's share of training time at ``update_every = 500``, (c) the ESD routes for one
768x768 matrix (``svdvals`` vs ``eigvalsh`` of :math:`W^\\top W`) and the two power-law fits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from alphadecay.assign import module_alphas
from alphadecay.esd import esd_eigenvalues, pl_fit
from alphadecay.model import TinyLlama
from alphadecay.train import lm_loss
from paperkit import figure, loglog_slope, print_table, save_figure, time_callable

__all__ = ["bench", "refresh_cost"]

VOCAB = 256


def refresh_cost(
    d: int,
    n_layers: int,
    *,
    batch: int,
    ctx: int = 64,
    update_every: int = 500,
    device: str = "cpu",
    min_run_time: float = 0.2,
) -> dict[str, Any]:
    """Refresh time, training-step time and the refresh's share at ``update_every``."""
    torch.manual_seed(0)
    model = TinyLlama(VOCAB, d=d, n_layers=n_layers, n_heads=max(1, d // 64), ctx=ctx).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    x = torch.randint(0, VOCAB, (batch, ctx + 1), device=device)

    def train_step() -> None:
        opt.zero_grad(set_to_none=True)
        lm_loss(model, x).backward()
        opt.step()

    min_eigs = min(50, d)
    n_mats = len(module_alphas(model, min_eigs=min_eigs))
    refresh = time_callable(
        lambda: module_alphas(model, min_eigs=min_eigs), device=device, min_run_time=min_run_time
    )
    step = time_callable(train_step, device=device, min_run_time=min_run_time)
    overhead = refresh.median_s / (update_every * step.median_s + refresh.median_s)
    return {
        "d": d,
        "layers": n_layers,
        "params_M": sum(p.numel() for p in model.parameters()) / 1e6,
        "matrices": n_mats,
        "tokens/step": batch * ctx,
        "refresh_ms": refresh.median_s * 1e3,
        "step_ms": step.median_s * 1e3,
        f"overhead_%@{update_every}": 100 * overhead,
    }


def _routes(n: int, device: str, min_run_time: float) -> list[dict[str, Any]]:
    torch.manual_seed(0)
    W = torch.randn(n, n, device=device) / n**0.5
    eigs = esd_eigenvalues(W).cpu()
    rows = [
        ("esd: svdvals(W)^2", lambda: esd_eigenvalues(W)),
        ("esd: eigvalsh(W^T W)", lambda: torch.linalg.eigvalsh(W.T @ W)),
        ("fit: median (Hill)", lambda: pl_fit(eigs)),
        ("fit: ks (scan all xmin)", lambda: pl_fit(eigs, method="ks")),
    ]
    return [
        {
            "what": name,
            "ms": time_callable(fn, device=device, min_run_time=min_run_time).median_s * 1e3,
        }
        for name, fn in rows
    ]


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    widths: list[int] | None = None,
    route_n: int = 768,
) -> dict[str, Any]:
    """Print and return the cost tables; save ``refresh_cost.png``.

    ``widths`` (2-layer models) and ``route_n`` (the matrix of the ESD-route table) shrink the run
    for smoke tests.
    """
    widths = widths or ([128, 256, 512, 768] if quick else [128, 256, 512, 768, 1024])
    min_run_time = 0.1 if quick else 0.3
    rows = [refresh_cost(64, 2, batch=16, device=device, min_run_time=min_run_time)]
    rows.append(refresh_cost(128, 4, batch=32, device=device, min_run_time=min_run_time))
    scaling = [
        refresh_cost(d, 2, batch=8, device=device, min_run_time=min_run_time) for d in widths
    ]
    if not quick:
        scaling.append(refresh_cost(768, 12, batch=8, device=device, min_run_time=min_run_time))
    rows += scaling
    print_table(rows, title=f"One AlphaDecay refresh vs one training step ({device})")
    two_layer = [r for r in scaling if r["layers"] == 2]
    slopes = {
        "refresh_vs_d": loglog_slope(
            [r["d"] for r in two_layer], [r["refresh_ms"] for r in two_layer]
        ),
        "step_vs_d": loglog_slope([r["d"] for r in two_layer], [r["step_ms"] for r in two_layer]),
    }
    print_table([slopes], title="log-log slopes against width d (2 layers)")
    routes = _routes(route_n, device, min_run_time)
    print_table(routes, title=f"ESD routes and fits for one {route_n}x{route_n} matrix")
    fig, ax = figure(size=(5.0, 3.6))
    ax.loglog(
        [r["d"] for r in two_layer], [r["refresh_ms"] for r in two_layer], "o-", label="refresh"
    )
    ax.loglog(
        [r["d"] for r in two_layer], [r["step_ms"] for r in two_layer], "s-", label="train step"
    )
    ax.set(xlabel="width d", ylabel="ms", title="ESD refresh vs training step (2 layers)")
    ax.legend()
    save_figure(fig, Path(out) / "refresh_cost.png")
    return {"rows": rows, "slopes": slopes, "routes": routes}
