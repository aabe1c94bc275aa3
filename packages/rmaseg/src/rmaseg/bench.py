"""Benchmark: decision time against the number of pixels d, with log-log slopes.

``rmaseg bench [--quick]`` times one class of float32 probabilities ``p = u^3`` (u uniform) for
d from 10^3 to 10^7: threshold 0.5, argmax over (1 - p, p), RMA with the sort solver and with
the linear (Dinkelbach) solver, the anchor package's RMA and its RankDice blind approximation
(BA, up to 10^6), and the exact O(d^2) RankDice/RankIoU references (up to 10^4). It reports the
slopes, the Dinkelbach iteration counts and the speed ratios at d = 10^6.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from paperkit import figure, loglog_slope, print_table, progress, save_figure, time_callable
from rmaseg.anchor import anchor_available, anchor_rule
from rmaseg.api import rma_predict
from rmaseg.exact import rankdice_exact, rankiou_exact
from rmaseg.rma import dinkelbach_masks

__all__ = ["RULES", "bench", "slopes", "time_rules"]

#: Rule name -> largest d it is timed at in the full run.
RULES = {
    "threshold": 10**7,
    "argmax": 10**7,
    "RMA-sort": 10**7,
    "RMA-linear": 10**7,
    "anchor RMA": 10**7,
    "anchor BA": 10**6,
    "exact RankDice": 10**4,
    "exact RankIoU": 10**4,
}


def _rule(name: str, p: torch.Tensor) -> Callable[[], Any]:
    if name == "threshold":
        return lambda: p > 0.5
    if name == "argmax":
        two = torch.cat([1 - p, p], dim=1)
        return lambda: two.argmax(dim=1)
    if name in ("RMA-sort", "RMA-linear"):
        solver = "sort" if name == "RMA-sort" else "linear"
        return lambda: rma_predict(p, "dice", "multilabel", solver=solver)
    if name == "anchor RMA":
        return lambda: anchor_rule("dice", "RMA")(p)
    if name == "anchor BA":
        return lambda: anchor_rule("dice", "BA")(p)
    flat = p.reshape(-1).double()
    exact = rankdice_exact if name == "exact RankDice" else rankiou_exact
    return lambda: exact(flat)


def time_rules(
    sizes: list[int],
    limits: dict[str, int],
    *,
    min_run_time: float = 0.3,
    device: str = "cpu",
    description: str = "timing",
    threads: int | None = 1,
) -> list[dict[str, Any]]:
    """Median decision time (ms) of each rule at each d <= its limit; RMA-linear rows carry
    the Dinkelbach iteration count. Anchor rules are skipped when ``rankseg`` is missing.

    ``threads``: torch CPU threads while timing (restored after; None keeps the setting). One
    thread by default: on a loaded 2-core machine, waking a second thread cost ~12 ms per
    parallel op here, which would swamp every per-pixel cost above d = 32,768.
    """
    names = [n for n in limits if anchor_available() or not n.startswith("anchor")]
    cases = [(n, d) for n in names for d in sizes if d <= limits[n]]
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        return [
            _time_one(name, d, device, min_run_time) for name, d in progress(cases, description)
        ]
    finally:
        torch.set_num_threads(before)


def _time_one(name: str, d: int, device: str, min_run_time: float) -> dict[str, Any]:
    g = torch.Generator().manual_seed(d)
    p = (torch.rand(1, 1, d, generator=g) ** 3).to(device)
    heavy = name.startswith("exact") or (name == "anchor BA" and d >= 10**6)
    timing = time_callable(
        _rule(name, p),
        label=name,
        sub_label=f"d={d}",
        device=device,
        warmup=0 if heavy else 1,
        min_run_time=min_run_time,
    )
    row = {"rule": name, "d": d, "ms": 1e3 * timing.median_s}
    if name == "RMA-linear":
        row["iterations"] = dinkelbach_masks(p, "dice")[2]
    return row


def slopes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Log-log slope of time against d per rule, fitted from d = 10^4 up (all points if fewer
    than three remain): fixed per-call overheads dominate below."""
    out = []
    for name in dict.fromkeys(r["rule"] for r in rows):
        mine = [r for r in rows if r["rule"] == name]
        upper = [r for r in mine if r["d"] >= 10**4]
        fit = upper if len(upper) >= 3 else mine
        if len(fit) >= 2:
            slope = loglog_slope([r["d"] for r in fit], [r["ms"] for r in fit])
            out.append(
                {"rule": name, "slope": slope, "fitted d": f"{fit[0]['d']:.0e}-{fit[-1]['d']:.0e}"}
            )
    return out


def bench(
    *, quick: bool = False, device: str = "cpu", out: Path, sizes: list[int] | None = None
) -> dict[str, Any]:
    """Time every rule over d, print the tables, write ``scaling.png``.

    ``sizes`` overrides the list of d (for smoke tests; every rule then runs at every size).
    """
    if sizes is not None:
        limits = dict.fromkeys(RULES, max(sizes))
    else:
        top = 10**6 if quick else 10**7
        sizes = [10**k for k in range(3, 7 if quick else 8)]
        limits = {n: min(v, top) for n, v in RULES.items()}
    rows = time_rules(
        sizes, limits, min_run_time=0.2 if quick else 0.5, device=device, description="bench"
    )
    print_table(rows, title=f"decision time per map (ms), one class, float32, {device}")
    summary = slopes(rows)
    print_table(summary, title="log-log slope of time against d")
    ms = {(r["rule"], r["d"]): r["ms"] for r in rows}
    ref = 10**6 if (("RMA-linear", 10**6) in ms) else max(sizes)
    ratios = {
        f"{other} / RMA-linear": ms[(other, ref)] / ms[("RMA-linear", ref)]
        for other in limits
        if (other, ref) in ms and other != "RMA-linear"
    }
    print_table([{"d": ref, **ratios}], title="time ratios to RMA-linear")
    if not anchor_available():
        print("rankseg is not installed: the anchor columns are left out.")
    fig, ax = figure(1, 1, size=(7, 4.5))
    for name in dict.fromkeys(r["rule"] for r in rows):
        mine = [r for r in rows if r["rule"] == name]
        ax.loglog([r["d"] for r in mine], [r["ms"] for r in mine], "o-", label=name)
    ax.set(xlabel="pixels d", ylabel="decision time (ms)", title=f"decision time vs d ({device})")
    ax.legend(fontsize=7)
    save_figure(fig, out / "scaling.png")
    return {
        "device": device,
        "rows": rows,
        "slopes": summary,
        "ratios_at_d": ref,
        "ratios": ratios,
        "anchor": anchor_available(),
    }
