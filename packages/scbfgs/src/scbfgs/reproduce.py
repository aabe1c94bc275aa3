"""The paper's claims at small scale: ``scbfgs reproduce [--quick] [--seed N] [--out DIR]``.

(1) Phases: on L2-regularised logistic regression (breast cancer, d = 30) and the cubic chain,
    log(f - f*) shows a linear phase and then a superlinear drop, after which every step is the unit
    step; against gradient descent (Armijo), damped Newton and scipy's BFGS.
(2) Affine invariance: on f(Az + c) with cond(A) in {1, 1e2, 1e4}, BFGS with B0 mapped to A'B0A
    takes exactly the iterations it takes on f; with B0 = I, Psi(B0_bar) grows with cond(A), and so
    may the count (as the theory allows); gradient descent slows down with cond(A).
(3) Dependence on the affine-invariant quantities: iterations to f - f* <= 1e-10 against
    Psi(B0_bar) (B0 = cI) and against M sqrt(f(x0) - f*) (starts at growing distance).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import ortho_group

from paperkit import figure, print_table, progress, save_figure
from scbfgs.baselines import damped_newton, gradient_descent_armijo, scipy_bfgs
from scbfgs.bfgs import bfgs
from scbfgs.diagnostics import newton_solve, psi
from scbfgs.problems import Problem, affine_transform, breast_cancer_logistic, cubic_chain

__all__ = ["phase_summary", "reproduce"]

EPS = 1e-10  # the suboptimality at which iterations are counted


def _solve(p: Problem) -> tuple[np.ndarray, float]:
    return newton_solve(p.f, p.grad, p.hess, np.zeros(p.dim))


def _iterations(gaps: np.ndarray) -> int | None:
    hit = np.nonzero(gaps <= EPS)[0]
    return int(hit[0]) if hit.size else None


def phase_summary(gaps: np.ndarray, f_star: float) -> dict[str, float]:
    """Linear rate of the first half and the contraction of the last third, before the floor.

    Ratios :math:`r_t=(f_{t+1}-f^*)/(f_t-f^*)` up to the rounding floor
    :math:`10^{-12}\\max(1,|f^*|)`: ``linear_rate`` is their geometric mean over the first half of
    the run, ``tail_rate`` over the last third (superlinear: the latter is far smaller).
    """
    floor = 1e-12 * max(1.0, abs(f_star))
    below = np.nonzero(gaps <= floor)[0]
    n = int(below[0]) if below.size else len(gaps)
    ratios = gaps[1:n] / gaps[: n - 1]
    ratios = ratios[ratios > 0]
    if ratios.size < 3:
        return {"linear_rate": float("nan"), "tail_rate": float("nan")}
    half, third = max(1, ratios.size // 2), max(1, ratios.size // 3)
    return {
        "linear_rate": float(np.exp(np.log(ratios[:half]).mean())),
        "tail_rate": float(np.exp(np.log(ratios[-third:]).mean())),
    }


def _phases(problems: list[Problem], gd_cap: int) -> tuple[list[dict], dict[str, dict]]:
    rows, curves = [], {}
    for p in progress(problems, "phases"):
        x_star, f_star = _solve(p)
        x0 = np.zeros(p.dim)
        ours = bfgs(p.f, p.grad, x0, f_star=f_star, M=p.M_bound)
        gd = gradient_descent_armijo(p.f, p.grad, x0, max_iter=gd_cap, f_star=f_star, f_tol=EPS)
        newton = damped_newton(p.f, p.grad, p.hess, x0, f_star=f_star, f_tol=EPS)
        sp = scipy_bfgs(p.f, p.grad, x0, gtol=1e-9)
        gaps = ours.f_hist - f_star
        rows.append(
            {
                "problem": p.name,
                "M sqrt(D0)": ours.M_sqrt_delta0,
                "BFGS iters": _iterations(gaps),
                "t_unit": ours.t_unit,
                **phase_summary(gaps, f_star),
                "BFGS f-evals": ours.nfev,
                "scipy BFGS iters": _iterations(sp.f_hist - f_star),
                "Newton iters": _iterations(newton["f_hist"] - f_star),
                "GD iters": _iterations(gd["f_hist"] - f_star) or f">{gd_cap}",
            }
        )
        curves[p.name] = {"bfgs": gaps, "gd": gd["f_hist"] - f_star, "t_unit": ours.t_unit}
    return rows, curves


def _conditioned(d: int, cond: float, rng: np.random.Generator) -> np.ndarray:
    U = ortho_group.rvs(d, random_state=rng)
    V = ortho_group.rvs(d, random_state=rng)
    return U @ np.diag(np.logspace(0, -np.log10(cond), d)) @ V.T


def _affine(p: Problem, conds: list[float], gd_cap: int, rng: np.random.Generator) -> list[dict]:
    x_star, f_star = _solve(p)
    x0, c = np.zeros(p.dim), rng.standard_normal(p.dim) / np.sqrt(p.dim)
    rows = []
    for cond in progress(conds, "affine"):
        A = _conditioned(p.dim, cond, rng)
        q = affine_transform(p, A, c)
        z0, z_star = np.linalg.solve(A, x0 - c), np.linalg.solve(A, x_star - c)
        stop = dict(f_star=f_star, f_tol=EPS, tol=0.0)
        mapped = bfgs(q.f, q.grad, z0, B0=A.T @ A, **stop)  # B0 = I on f, mapped
        plain = bfgs(q.f, q.grad, z0, B0=None, **stop)
        gd = gradient_descent_armijo(q.f, q.grad, z0, max_iter=gd_cap, f_star=f_star, f_tol=EPS)
        rows.append(
            {
                "cond(A)": cond,
                "BFGS, B0 mapped: iters": mapped.nit,
                "Psi(B0_bar), B0 = I": psi(np.eye(p.dim), q.hess(z_star)),
                "BFGS, B0 = I: iters": plain.nit,
                "GD iters": gd["nit"] if gd["fun"] - f_star <= EPS else f">{gd_cap}",
            }
        )
    return rows


def _fit(x: list[float], y: list[float]) -> dict[str, float]:
    slope, intercept = np.polyfit(x, y, 1)
    return {
        "slope": float(slope),
        "intercept": float(intercept),
        "r": float(np.corrcoef(x, y)[0, 1]),
    }


def _sweeps(p: Problem, scales: list[float], radii: list[float], rng: np.random.Generator):
    x_star, f_star = _solve(p)
    H_star = p.hess(x_star)
    stop = dict(f_star=f_star, f_tol=EPS, tol=0.0)
    b0_rows = []
    for c in progress(scales, "B0 = cI"):
        res = bfgs(p.f, p.grad, np.zeros(p.dim), B0=c, **stop)
        b0_rows.append({"c": c, "Psi(B0_bar)": psi(c * np.eye(p.dim), H_star), "iters": res.nit})
    u = rng.standard_normal(p.dim)
    u /= np.sqrt(u @ H_star @ u)  # unit length in the local norm at x*
    start_rows = []
    for r in progress(radii, "starts"):
        res = bfgs(p.f, p.grad, x_star + r * u, B0=H_star, M=p.M_bound, **stop)
        start_rows.append(
            {
                "radius": r,
                "D0": res.delta0,
                "M sqrt(D0)": res.M_sqrt_delta0,
                "iters": res.nit,
            }
        )
    psis, m_d0 = [r["Psi(B0_bar)"] for r in b0_rows], [r["M sqrt(D0)"] for r in start_rows]
    fits = {
        "iters vs Psi": _fit(psis, [r["iters"] for r in b0_rows]),
        "iters vs log10 Psi": _fit(np.log10(psis).tolist(), [r["iters"] for r in b0_rows]),
        "iters vs M sqrt(D0)": _fit(m_d0, [r["iters"] for r in start_rows]),
        "iters vs log10 M sqrt(D0)": _fit(
            np.log10(m_d0).tolist(), [r["iters"] for r in start_rows]
        ),
    }
    return b0_rows, start_rows, fits


def _plot(curves, affine_rows, b0_rows, start_rows, out: Path) -> Path:
    fig, axes = figure(1, 4, size=(19, 4.2))
    ax_c, ax_a, ax_p, ax_m = axes[0]
    for i, (name, c) in enumerate(curves.items()):
        color = f"C{i}"
        ax_c.semilogy(np.maximum(c["bfgs"], 1e-17), color=color, label=f"BFGS: {name}")
        gd = c["gd"][: 3 * len(c["bfgs"])]
        ax_c.semilogy(np.maximum(gd, 1e-17), color=color, ls=":", alpha=0.7)
        if c["t_unit"] is not None:
            ax_c.axvline(c["t_unit"], color=color, ls="--", lw=0.8)
    ax_c.set(
        xlabel="iteration t", ylabel="f(x_t) - f*", title="phases (dotted: GD; dashed: t_unit)"
    )
    ax_c.legend(fontsize=6)
    conds = [r["cond(A)"] for r in affine_rows]
    ax_a.semilogx(
        conds, [r["BFGS, B0 mapped: iters"] for r in affine_rows], "o-", label="BFGS, B0 mapped"
    )
    ax_a.semilogx(
        conds, [r["BFGS, B0 = I: iters"] for r in affine_rows], "s-", label="BFGS, B0 = I"
    )
    gd = [r["GD iters"] for r in affine_rows]
    ax_a.semilogx(
        [c for c, g in zip(conds, gd, strict=True) if isinstance(g, int)],
        [g for g in gd if isinstance(g, int)],
        "^-",
        label="GD (capped runs omitted)",
    )
    ax_a.set(
        xlabel="cond(A)", ylabel=f"iterations to f - f* <= {EPS:g}", yscale="log", title="f(Az + c)"
    )
    ax_a.legend(fontsize=7)
    ax_p.plot([r["Psi(B0_bar)"] for r in b0_rows], [r["iters"] for r in b0_rows], "o-")
    ax_p.set(
        xlabel="Psi(B0_bar), B0 = cI", ylabel="iterations", title="initial Hessian approximation"
    )
    ax_m.plot([r["M sqrt(D0)"] for r in start_rows], [r["iters"] for r in start_rows], "o-")
    ax_m.set(
        xlabel="M sqrt(f(x0) - f*) (M: the problem's bound)",
        ylabel="iterations",
        title="initial error, B0 = Hessian at x*",
    )
    return save_figure(fig, out / "scbfgs.png")


def reproduce(
    *, quick: bool = False, seed: int = 0, out: Path, dim: int | None = None
) -> dict[str, Any]:
    """Run the three experiments; print the tables, write ``scbfgs.png``.

    ``dim`` overrides the cubic chain's dimension (for smoke tests).
    """
    rng = np.random.default_rng(seed)
    d = dim or (20 if quick else 50)
    gd_cap = 5_000 if quick else 20_000
    mus = [1e-2] if quick else [1e-2, 1e-4]
    problems = [breast_cancer_logistic(mu) for mu in mus] + [cubic_chain(d, 1e-3)]
    phase_rows, curves = _phases(problems, gd_cap)
    print_table(phase_rows, title=f"(1) phases: iterations to f - f* <= {EPS:g}, x0 = 0, B0 = I")
    affine_rows = _affine(cubic_chain(d, 1e-3), [1.0, 1e2, 1e4], gd_cap, rng)
    print_table(affine_rows, title=f"(2) affine invariance on cubic_chain(d={d}) o (Az + c)")
    scales = [1e-3, 1e-1, 1e1, 1e3] if quick else [1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3]
    radii = [0.1, 1.0, 3.0, 10.0] if quick else [0.1, 0.3, 1.0, 3.0, 10.0, 30.0]
    b0_rows, start_rows, fits = _sweeps(cubic_chain(d, 1e-3), scales, radii, rng)
    print_table(b0_rows, title="(3a) iterations vs Psi(B0_bar), B0 = cI, x0 = 0")
    print_table(start_rows, title="(3b) iterations vs M sqrt(D0), B0 = Hessian at x*")
    print_table([{"fit": k, **v} for k, v in fits.items()], title="(3) linear fits")
    _plot(curves, affine_rows, b0_rows, start_rows, out)
    return {
        "eps": EPS,
        "phases": phase_rows,
        "affine": affine_rows,
        "B0_sweep": b0_rows,
        "start_sweep": start_rows,
        "fits": fits,
        "curves": {k: {"bfgs": v["bfgs"], "t_unit": v["t_unit"]} for k, v in curves.items()},
    }
