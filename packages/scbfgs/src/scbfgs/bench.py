"""Benchmark against scipy's BFGS: ``scbfgs bench [--quick]`` (CPU only: numpy and scipy).

L2-regularised logistic regression on random data (n = 1000 samples, d features, mu = 1e-3) for
growing d. Both solvers start at 0 with B0 = I and stop at f - f* <= 1e-8 (f* by Newton's method).
Each solve is one :class:`paperkit.Measurement` (case ``"solve"``: median seconds of whole solves,
peak bytes); the rows of case ``"per iteration"`` divide those seconds by the solve's iterations.
The log-log slope of the time per iteration against d shows the cost of one quasi-Newton step.

Claims, headline first: (1) one iteration of this BFGS costs O(d^2) (the rank-two inverse
update): held when the slope of its time per iteration, over the upper half of the dimensions, is
at most 2.5 (O(d^3) gives 3); (2) it is faster than scipy's BFGS to the same accuracy: held when
it is faster at every d, partly when at some.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize

from paperkit import Claim, Measurement, Report, measure, plot_scaling, print_table, progress
from paperkit import scaling as fit_scaling
from scbfgs.diagnostics import newton_solve
from scbfgs.problems import Problem, logistic_l2
from scbfgs.solver import bfgs

__all__ = ["bench"]

N_SAMPLES, MU, F_TOL = 1000, 1e-3, 1e-8
#: The largest slope of time per iteration against d that counts as O(d^2).
QUADRATIC_SLOPE = 2.5


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
    ratios = [solve["scipy", d].seconds / solve["scbfgs", d].seconds for d in dims]
    faster = [r > 1 for r in ratios]
    verdict = "held" if all(faster) else ("partly" if any(faster) else "not held")
    shown = ", ".join(f"d={d}: {r:.2g}x" for d, r in zip(dims, ratios, strict=True))
    return Claim(
        "This BFGS reaches f - f* <= 1e-8 faster than scipy's BFGS",
        paper="not a claim of the paper: a check of this implementation against a reference one",
        measured=f"scipy time / ours: {shown}",
        verdict=verdict,
        why="held when ours is faster at every d, partly when at some; one random problem per d, "
        "the same start and stop for both",
    )


def bench(*, quick: bool, device: str, out: Path, dims: Sequence[int] | None = None) -> Report:
    """Iterations, evaluations and time to f - f* <= 1e-8 against scipy's BFGS, over d.

    ``device`` is ``"cpu"`` (the package is registered without GPU code, so the command refuses
    ``--device cuda``); ``dims`` overrides the dimensions (for smoke tests).
    """
    dims = list(dims or ([100, 250, 500] if quick else [100, 250, 500, 1000, 2000]))
    rng = np.random.default_rng(0)
    timer = {"warmup": 0, "min_repeats": 1, "min_time": 0.2 if quick else 0.5}
    case = f"to f - f* <= {F_TOL:g}"
    rows, table = [], []
    for d in progress(dims, "bench"):
        p = _problem(d, rng)
        x0 = np.zeros(d)
        _, f_star = newton_solve(p.f, p.grad, p.hess, x0)
        runs: dict[str, dict[str, Any]] = {"scbfgs": {}, "scipy": {}}
        for impl, solve in (("scbfgs", _ours), ("scipy", _scipy)):
            row = measure(
                impl,
                d,
                functools.partial(solve, p, x0, f_star, runs[impl]),
                device=device,
                case="solve",
                params={"stop": case},
                **timer,
            )
            params = {**row.params, "iterations": runs[impl]["nit"], "f_evals": runs[impl]["nfev"]}
            rows.append(replace(row, params=params))
        ours, theirs = rows[-2], rows[-1]
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
    rows += [_per_iteration(r) for r in list(rows)]
    print_table(table, title=f"logistic_l2, n={N_SAMPLES}, mu={MU:g}: {case}, {device}")
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
        claims=[_order_claim(fits), _speed_claim(rows)],
        tables={"solve": table},
        figures=[figure],
        settings={
            "n_samples": N_SAMPLES,
            "mu": MU,
            "f_tol": F_TOL,
            "dims": dims,
            "fitted dims": upper,
            "timer": timer,
            "x0": "0",
            "B0": "I",
            "device": device,
        },
        measurements=rows,
        data={"scaling": fits},
    )
