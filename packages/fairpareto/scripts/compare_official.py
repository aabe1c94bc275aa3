"""Compare MIFPO with the official implementation on the same binned instances (error measure).

    uv run python packages/fairpareto/scripts/compare_official.py PATH/TO/optimizer.py

``optimizer.py`` is ``fairpareto/optimizer.py`` of the official repository (bp6725/FairPareto),
which is not a dependency of this package: pass a checkout's file. Its ``EvelPertoFront`` is run
with loss ``"ACC"`` (it minimises the error, like ours; dccp's defaults) on random instances with
n = m = 4 bins, k = 2, and compared with ours and with the exact LP at the same gammas.
Prints one row per (instance, gamma) and the summary.
"""

from __future__ import annotations

import importlib.util
import sys
import time

import numpy as np

from fairpareto.bench import random_bins
from fairpareto.lp import lp_error
from fairpareto.performance import perspective_numpy
from fairpareto.program import plan_masses, solve_mifpo

GAMMAS = (0.0, 0.2, 0.5, 1.0)


def _official(path: str):
    spec = importlib.util.spec_from_file_location("official_optimizer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.EvelPertoFront


def main(path: str, instances: int = 3) -> None:
    front_cls = _official(path)
    rows = []
    for seed in range(instances):
        b = random_bins(4, seed=seed)
        col = (b.u[:, None], b.v[:, None], b.U[:, None], b.V[:, None])
        for gamma in GAMMAS:
            official = front_cls(b.n, b.m, 2, b.alpha, *col, loss="ACC")
            t0 = time.perf_counter()
            r1, r0 = official.solve_for_gamma(gamma)
            t_official = time.perf_counter() - t0
            # with dccp 1.1 the official ``prob.solve(method="dccp")[0]`` fails after the solve
            # (the call returns a float), so its value is NaN; its plan is still in the variables
            R1 = np.stack([r1[c].value for c in range(2)])
            R0 = np.stack([r0[c].value for c in range(2)])
            _, _, q, pi = plan_masses(b, R1, R0)
            e_official = perspective_numpy("error", pi, q)
            t0 = time.perf_counter()
            ours = solve_mifpo(b, gamma).value
            t_ours = time.perf_counter() - t0
            lp = lp_error(b, np.array([gamma]))[0]
            rows.append((seed, gamma, e_official, ours, lp, t_official, t_ours))
            print(
                f"instance {seed} gamma {gamma:.1f}: official plan {e_official:.6f} (its "
                f"reported value {official.results[gamma]}) "
                f"ours {ours:.6f}  LP {lp:.6f}  ({t_official:.2f} s vs {t_ours:.2f} s)"
            )
    off = np.array([r[2] for r in rows], dtype=float)
    ours = np.array([r[3] for r in rows])
    lp = np.array([r[4] for r in rows])
    ok = np.isfinite(off)
    print(f"official plans evaluated on {ok.sum()} of {len(rows)}")
    if ok.any():
        print(f"max |official - ours| = {np.abs(off[ok] - ours[ok]).max():.2e}")
        print(f"max |official - LP| = {np.abs(off[ok] - lp[ok]).max():.2e}")
    print(f"max |ours - LP| = {np.abs(ours - lp).max():.2e}")
    print(
        f"median seconds: official {np.median([r[5] for r in rows]):.2f}, "
        f"ours {np.median([r[6] for r in rows]):.2f}"
    )


if __name__ == "__main__":
    main(sys.argv[1])
