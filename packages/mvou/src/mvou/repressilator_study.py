r"""More seeds, iterations, steps and the minibatch coupling for the repressilator experiment (c)
of the reproduction: ``python -m mvou.repressilator_study [--seeds 1 2] [--iterations 3]
[--steps N] [--coupling-scope minibatch] [--out DIR]``.

Runs (c) with the full run's settings (changed by the options) for each seed and prints, per
seed, the held-out W2 of SF2M, of every iteration of the iterated variant and of the refits with
fixed references (the paper's ground truth, the least-squares mvOU fit of the true drift), the
relative (Frobenius) error of each estimated A against that fit, and the CPU seconds.

``--spectra results.json`` instead prints the eigenvalues of the drift matrices that a run of
``mvou reproduce`` stored (the least-squares fit and each estimated A) beside those of the
linearisation :math:`H\,\partial f(x^*)` at the repressilator's symmetric fixed point
:math:`x^* = \alpha / (1 + x^{*h})`, all in rescaled time.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import torch

from mvou._threads import one_thread
from mvou.data import REPRESSILATOR, repressilator_fixed_point
from mvou.reproduce import RUNS, repressilator_experiment
from paperkit import print_table

__all__ = ["main", "spectra"]


def _eigenvalues(A: torch.Tensor) -> str:
    z = sorted(torch.linalg.eigvals(A.to(torch.float64)).tolist(), key=lambda c: (c.real, c.imag))
    return ", ".join(
        f"{c.real:.2f}{c.imag:+.2f}i" if abs(c.imag) > 5e-3 else f"{c.real:.2f}" for c in z
    )


def spectra(results: dict) -> list[dict[str, str]]:
    """Eigenvalues of the stored drift matrices and of the fixed point's linearisation."""
    p, data = REPRESSILATOR, results["data"]
    xs, J = repressilator_fixed_point()
    x = xs[0]
    rows = [
        {
            "matrix": f"H * Jacobian at x* = {float(x):.2f}",
            "eigenvalues": _eigenvalues(p["horizon"] * J),
        }
    ]
    rows.append(
        {
            "matrix": "least-squares fit of the true drift",
            "eigenvalues": _eigenvalues(torch.tensor(data["repressilator_A_least_squares"])),
        }
    )
    for k, A in enumerate(data["repressilator_A_estimates"]):
        rows.append(
            {
                "matrix": f"A estimated from iteration {k + 1}",
                "eigenvalues": _eigenvalues(torch.tensor(A)),
            }
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mvou.repressilator_study")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument(
        "--steps", type=int, help="Adam steps per training (default: the full run's)"
    )
    parser.add_argument("--coupling-scope", choices=("global", "minibatch"), default="global")
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--spectra", type=Path, help="results.json of `mvou reproduce`")
    args = parser.parse_args(argv)
    if args.spectra:
        print_table(spectra(json.loads(args.spectra.read_text())), title="drift spectra")
        return 0
    cfg = {**RUNS[False], "iterations": args.iterations, "coupling_scope": args.coupling_scope}
    if args.steps:
        cfg["repressilator_steps"] = args.steps
    results = {}
    with one_thread():
        for seed in args.seeds:
            rep = repressilator_experiment(cfg, seed)
            errs = [*rep["A_rel_errors"], *["-"] * (len(rep["rows"]) - len(rep["A_rel_errors"]))]
            for row, err in zip(rep["rows"], errs, strict=True):
                row["rel. error of the A estimated from it"] = err
            row_cpu = f"{rep['cpu_seconds']:.0f} s of CPU"
            print(f"seed {seed}: {row_cpu}")
            print_table(rep["rows"], title=f"(c) repressilator, seed {seed}")
            results[seed] = rep
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "repressilator_study.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
