"""Benchmark against scipy's BFGS: ``scbfgs bench [--quick]`` (CPU only: numpy and scipy).

L2-regularised logistic regression on random data (n = 1000 samples, d features, mu = 1e-3) for
growing d. Both solvers start at 0 with B0 = I and stop at f - f* <= 1e-8 (f* by Newton's method).
Each solve is one :class:`paperkit.Measurement` (case ``"solve"``: median seconds of whole solves,
peak bytes); the rows of case ``"per iteration"`` divide those seconds by the solve's iterations.
The log-log slope of the time per iteration against d shows the cost of one quasi-Newton step.

Case ``"update"`` times the inverse update alone against its memory limit, in alternating rounds
(:func:`paperkit.measure_interleaved`): the in-place update (one product Hy, two BLAS rank-one
updates), the textbook outer-product form (four d x d temporaries), and one streaming pass over H
(``H.sum()``). The update must read H once and read and write it twice, so three passes is the
limit it is held to.

Everything runs with one BLAS thread (``threadpoolctl``), for scipy as for ours: the update is
memory bound, and OpenBLAS's threaded rank-one update was measured 4-5x slower than one thread at
d = 1000 on a 2-core machine (thread wake-ups), which would hide the update's cost.

Claims, headline first: (1) one iteration of this BFGS costs O(d^2) (the rank-two inverse
update): held when the slope of its time per iteration, over the upper half of the dimensions, is
at most 2.5 (O(d^3) gives 3); (2) the update runs within 3x of three passes over H: held when the
median same-round ratio is at most 3 at every d; (3) it is faster than scipy's BFGS to the same
accuracy: held when it is faster at every d, partly when at some.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize
from threadpoolctl import threadpool_limits

from paperkit import (
    Claim,
    Measurement,
    Report,
    measure_interleaved,
    plot_scaling,
    print_table,
    progress,
    ratio_spread,
)
from paperkit import scaling as fit_scaling
from scbfgs.diagnostics import newton_solve
from scbfgs.problems import Problem, logistic_l2
from scbfgs.solver import _update, bfgs

__all__ = ["bench"]

N_SAMPLES, MU, F_TOL = 1000, 1e-3, 1e-8
#: The largest slope of time per iteration against d that counts as O(d^2).
QUADRATIC_SLOPE = 2.5
#: Streaming passes over H the update needs (read for Hy, then read and write twice), and the
#: largest ratio of its time to that many measured passes that the claim accepts.
UPDATE_PASSES, UPDATE_LIMIT_RATIO = 3, 3.0


def _ours(p: Problem, x0: np.ndarray, f_star: float, out: dict[str, Any]) -> None:
    res = bfgs(p.f, p.grad, x0, f_star=f_star, f_tol=F_TOL, tol=0.0, max_iter=5000)
    out.update(nit=res.nit, nfev=res.nfev)


def _scipy(p: Problem, x0: np.ndarray, f_star: float, out: dict[str, Any]) -> None:
    state = {"nit": 0}

    def callback(intermediate_result):
        state["nit"] += 1
        if intermediate_result.fun - f_star <= F_TOL:
            raise StopIteration

    result = optimize.minimize(
        p.f,
        x0,
        jac=p.grad,
        method="BFGS",
        callback=callback,
        options={"gtol": 1e-14, "maxiter": 5000},
    )
    out.update(nit=state["nit"], nfev=result.nfev)


def _problem(d: int, rng: np.random.Generator) -> Problem:
    A = rng.standard_normal((N_SAMPLES, d)) / np.sqrt(d)
    b = np.where(A @ rng.standard_normal(d) + 0.3 * rng.standard_normal(N_SAMPLES) > 0, 1.0, -1.0)
    return logistic_l2(A, b, MU)


def _outer_form(H: np.ndarray, s: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The textbook rank-two form with explicit outer products, the baseline of the update."""
    rho = 1.0 / (s @ y)
    Hy = H @ y
    return (
        H
        - rho * (np.outer(s, Hy) + np.outer(Hy, s))
        + (rho * rho * (y @ Hy) + rho) * np.outer(s, s)
    )


def _update_rows(d: int, rng: np.random.Generator, device: str, timer: dict) -> list[Measurement]:
    """The update, the outer-product form and one pass over H, in alternating rounds.

    H is SPD and (s, y) a curvature pair; after the first update H y = s, so repeating it leaves
    H unchanged up to rounding and every round times the same work on the same values.
    """
    G = rng.standard_normal((d, d)) / np.sqrt(d)
    H = np.ascontiguousarray(G @ G.T + np.eye(d))
    s = rng.standard_normal(d)
    y = np.linalg.solve(H, s) + 0.01 * rng.standard_normal(d)
    fns = {
        "in-place update": functools.partial(_update, H, s, y),
        "outer-product form": functools.partial(_outer_form, H, s, y),
        "one pass over H": H.sum,
    }
    return measure_interleaved(fns, d, device=device, case="update", **timer)


def _limit_table(rows: Sequence[Measurement]) -> list[dict[str, Any]]:
    table = []
    for d in sorted({r.size for r in rows if r.case == "update"}):
        by = {r.impl: r for r in rows if r.case == "update" and r.size == d}
        med, q1, q3 = ratio_spread(by["in-place update"], by["one pass over H"])
        outer, _, _ = ratio_spread(by["outer-product form"], by["in-place update"])
        table.append(
            {
                "d": d,
                "update ms": 1e3 * by["in-place update"].seconds,
                "update IQR ms": 1e3 * by["in-place update"].spread,
                "outer form ms": 1e3 * by["outer-product form"].seconds,
                "pass ms": 1e3 * by["one pass over H"].seconds,
                f"limit ({UPDATE_PASSES} passes) ms": UPDATE_PASSES
                * 1e3
                * by["one pass over H"].seconds,
                "update / limit": med / UPDATE_PASSES,
                "ratio IQR": f"{q1 / UPDATE_PASSES:.2f}-{q3 / UPDATE_PASSES:.2f}",
                "outer / update": outer,
            }
        )
    return table


def _limit_claim(table: Sequence[dict[str, Any]]) -> Claim:
    ratios = [r["update / limit"] for r in table]
    shown = ", ".join(
        f"d={r['d']}: {r['update / limit']:.2f} (IQR {r['ratio IQR']})" for r in table
    )
    return Claim(
        f"The inverse update runs within {UPDATE_LIMIT_RATIO:g}x of {UPDATE_PASSES} streaming "
        "passes over H",
        paper="not a claim of the paper: the update is O(d^2) and memory bound, so its limit is "
        "the passes over H it must make",
        measured=f"update time / ({UPDATE_PASSES} x one pass over H), median of same-round "
        f"ratios: {shown}",
        verdict="held" if all(r <= UPDATE_LIMIT_RATIO for r in ratios) else "not held",
        why=f"held when the median ratio is at most {UPDATE_LIMIT_RATIO:g} at every d; one pass "
        "is H.sum() in the same rounds",
    )


def _per_iteration(row: Measurement) -> Measurement:
    nit = max(row.params["iterations"], 1)
    return replace(row, seconds=row.seconds / nit, spread=row.spread / nit, case="per iteration")


def _order_claim(fits: dict[str, dict[str, Any]]) -> Claim:
    slope, theirs = fits["scbfgs"]["slope"], fits["scipy"]["slope"]
    sizes = fits["scbfgs"]["sizes"]
    return Claim(
        "One BFGS iteration in inverse form costs O(d^2) (the rank-two update)",
        paper="the method analysed: BFGS with the inverse update H+ = (I - r s y')H(I - r y s') + "
        "r s s', O(d^2) work per iteration",
        measured=f"log-log slope of time per iteration against d = {sizes[0]}-{sizes[-1]}: "
        f"{slope:.2f} (scipy's BFGS: {theirs:.2f})",
        verdict="held" if slope <= QUADRATIC_SLOPE else "not held",
        why=f"held when the slope is at most {QUADRATIC_SLOPE} (2 is O(d^2), 3 is O(d^3)); the "
        "objective's n d evaluation adds an O(d) part",
    )


def _speed_claim(rows: Sequence[Measurement]) -> Claim:
    solve = {(r.impl, r.size): r for r in rows if r.case == "solve"}
    dims = sorted({d for _, d in solve})
    spreads = [ratio_spread(solve["scipy", d], solve["scbfgs", d]) for d in dims]
    faster = [med > 1 for med, _, _ in spreads]
    verdict = "held" if all(faster) else ("partly" if any(faster) else "not held")
    shown = ", ".join(
        f"d={d}: {med:.3g}x (IQR {q1:.3g}-{q3:.3g})"
        for d, (med, q1, q3) in zip(dims, spreads, strict=True)
    )
    return Claim(
        "This BFGS reaches f - f* <= 1e-8 faster than scipy's BFGS",
        paper="not a claim of the paper: a check of this implementation against a reference one",
        measured=f"scipy time / ours, median of same-round ratios: {shown}",
        verdict=verdict,
        why="held when ours is faster at every d, partly when at some; one random problem per d, "
        "the same start and stop for both, solves alternating, one BLAS thread",
    )


def bench(*, quick: bool, device: str, out: Path, dims: Sequence[int] | None = None) -> Report:
    """Iterations, evaluations and time to f - f* <= 1e-8 against scipy's BFGS, over d.

    ``device`` is ``"cpu"`` (the package is registered without GPU code, so the command refuses
    ``--device cuda``); ``dims`` overrides the dimensions (for smoke tests).
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _bench(quick=quick, device=device, out=out, dims=dims)


def _bench(*, quick: bool, device: str, out: Path, dims: Sequence[int] | None) -> Report:
    dims = list(dims or ([100, 250, 500] if quick else [100, 250, 500, 1000, 2000]))
    rng = np.random.default_rng(0)
    timer = {"warmup": 0, "min_repeats": 3, "min_time": 0.2 if quick else 0.5}
    case = f"to f - f* <= {F_TOL:g}"
    rows, table = [], []
    for d in progress(dims, "bench"):
        p = _problem(d, rng)
        x0 = np.zeros(d)
        _, f_star = newton_solve(p.f, p.grad, p.hess, x0)
        runs: dict[str, dict[str, Any]] = {"scbfgs": {}, "scipy": {}}
        solves = {
            impl: functools.partial(solve, p, x0, f_star, runs[impl])
            for impl, solve in (("scbfgs", _ours), ("scipy", _scipy))
        }
        for row in measure_interleaved(
            solves, d, device=device, case="solve", params={"stop": case}, **timer
        ):
            params = {
                **row.params,
                "iterations": runs[row.impl]["nit"],
                "f_evals": runs[row.impl]["nfev"],
            }
            rows.append(replace(row, params=params))
        ours, theirs = rows[-2], rows[-1]
        rows += _update_rows(d, rng, device, timer)
        table.append(
            {
                "d": d,
                "iters": ours.params["iterations"],
                "scipy iters": theirs.params["iterations"],
                "f-evals/iter": ours.params["f_evals"] / max(ours.params["iterations"], 1),
                "scipy f-evals/iter": theirs.params["f_evals"]
                / max(theirs.params["iterations"], 1),
                "ms": 1e3 * ours.seconds,
                "scipy ms": 1e3 * theirs.seconds,
                "ms/iter": 1e3 * ours.seconds / max(ours.params["iterations"], 1),
                "scipy ms/iter": 1e3 * theirs.seconds / max(theirs.params["iterations"], 1),
                "scipy / ours time": theirs.seconds / ours.seconds,
                "peak bytes": ours.peak_bytes,
                "scipy peak bytes": theirs.peak_bytes,
            }
        )
    rows += [_per_iteration(r) for r in list(rows) if r.case == "solve"]
    print_table(table, title=f"logistic_l2, n={N_SAMPLES}, mu={MU:g}: {case}, {device}")
    limits = _limit_table(rows)
    print_table(limits, title=f"inverse update against {UPDATE_PASSES} passes over H, {device}")
    upper = dims[len(dims) // 2 :] if len(dims) >= 4 else dims
    fits = fit_scaling([r for r in rows if r.size in upper], baseline="scipy", case="per iteration")
    print(
        f"log-log slope of time per iteration against d (d >= {upper[0]}): "
        f"ours {fits['scbfgs']['slope']:.2f}, scipy {fits['scipy']['slope']:.2f}"
    )
    figure = plot_scaling(
        rows,
        out / "bench.png",
        case="per iteration",
        title="time per iteration",
        xlabel="dimension d",
    )
    return Report(
        claims=[_order_claim(fits), _limit_claim(limits), _speed_claim(rows)],
        tables={"solve": table, "update": limits},
        figures=[figure],
        settings={
            "n_samples": N_SAMPLES,
            "mu": MU,
            "f_tol": F_TOL,
            "dims": dims,
            "fitted dims": upper,
            "timer": timer,
            "update passes": UPDATE_PASSES,
            "update limit ratio": UPDATE_LIMIT_RATIO,
            "x0": "0",
            "B0": "I",
            "blas threads": 1,
            "device": device,
        },
        measurements=rows,
        data={"scaling": fits},
    )
