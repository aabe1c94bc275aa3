"""Benchmark against scipy's BFGS: ``scbfgs bench [--quick]``.

L2-regularised logistic regression on random data (n = 1000 samples, d features, mu = 1e-3) for
growing d. Both solvers start at 0 with B0 = I and stop at f - f* <= 1e-8 (f* by Newton's method);
the table gives iterations, function and gradient evaluations per iteration, wall time, and time
per iteration, whose log-log slope against d shows the O(d^2) cost of a dense quasi-Newton step.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize

from paperkit import figure, loglog_slope, print_table, progress, save_figure
from scbfgs.bfgs import bfgs
from scbfgs.diagnostics import newton_solve
from scbfgs.problems import logistic_l2

__all__ = ["bench"]

N_SAMPLES, MU, F_TOL = 1000, 1e-3, 1e-8


def _scipy_to_tolerance(p, x0, f_star):
    state = {"nit": 0}

    def callback(intermediate_result):
        state["nit"] += 1
        if intermediate_result.fun - f_star <= F_TOL:
            raise StopIteration

    start = time.perf_counter()
    result = optimize.minimize(
        p.f,
        x0,
        jac=p.grad,
        method="BFGS",
        callback=callback,
        options={"gtol": 1e-14, "maxiter": 5000},
    )
    return result, state["nit"], time.perf_counter() - start


def bench(
    *, quick: bool = False, device: str = "cpu", out: Path, dims: list[int] | None = None
) -> dict[str, Any]:
    """Iterations, evaluations and time to f - f* <= 1e-8 against scipy's BFGS, over d.

    ``device`` is accepted for the common interface (numpy runs on the CPU); ``dims`` overrides the
    dimensions (for smoke tests).
    """
    dims = dims or ([100, 250, 500] if quick else [100, 250, 500, 1000, 2000])
    rng = np.random.default_rng(0)
    rows = []
    for d in progress(dims, "bench"):
        A = rng.standard_normal((N_SAMPLES, d)) / np.sqrt(d)
        b = np.where(
            A @ rng.standard_normal(d) + 0.3 * rng.standard_normal(N_SAMPLES) > 0, 1.0, -1.0
        )
        p = logistic_l2(A, b, MU)
        x0 = np.zeros(d)
        _, f_star = newton_solve(p.f, p.grad, p.hess, x0)
        start = time.perf_counter()
        ours = bfgs(p.f, p.grad, x0, f_star=f_star, f_tol=F_TOL, tol=0.0, max_iter=5000)
        ours_s = time.perf_counter() - start
        theirs, their_nit, their_s = _scipy_to_tolerance(p, x0, f_star)
        rows.append(
            {
                "d": d,
                "iters": ours.nit,
                "scipy iters": their_nit,
                "f-evals/iter": ours.nfev / max(ours.nit, 1),
                "scipy f-evals/iter": theirs.nfev / max(their_nit, 1),
                "ms": 1e3 * ours_s,
                "scipy ms": 1e3 * their_s,
                "ms/iter": 1e3 * ours_s / max(ours.nit, 1),
                "scipy ms/iter": 1e3 * their_s / max(their_nit, 1),
                "scipy / ours time": their_s / ours_s,
            }
        )
    print_table(
        rows, title=f"logistic_l2, n={N_SAMPLES}, mu={MU:g}: to f - f* <= {F_TOL:g}, {device}"
    )
    upper = rows[len(rows) // 2 :] if len(rows) >= 4 else rows
    slopes = {
        "ours": loglog_slope([r["d"] for r in upper], [r["ms/iter"] for r in upper]),
        "scipy": loglog_slope([r["d"] for r in upper], [r["scipy ms/iter"] for r in upper]),
    }
    print(
        f"log-log slope of time per iteration against d (d >= {upper[0]['d']}): "
        f"ours {slopes['ours']:.2f}, scipy {slopes['scipy']:.2f}"
    )
    fig, ax = figure()
    ax.loglog([r["d"] for r in rows], [r["ms/iter"] for r in rows], "o-", label="scbfgs")
    ax.loglog([r["d"] for r in rows], [r["scipy ms/iter"] for r in rows], "s-", label="scipy BFGS")
    ax.set(xlabel="dimension d", ylabel="ms per iteration", title="time per iteration")
    ax.legend()
    save_figure(fig, out / "bench.png")
    return {"rows": rows, "slopes": slopes, "n_samples": N_SAMPLES, "mu": MU, "f_tol": F_TOL}
