import numpy as np
import pytest

from scbfgs import bfgs, cubic_chain, newton_solve, psi
from scbfgs.bench import bench
from scbfgs.reproduce import phase_summary, reproduce


def test_phase_summary_separates_linear_from_superlinear():
    linear = 0.5 ** np.arange(30)
    superlinear = np.concatenate(
        [0.5 ** np.arange(10), 0.5**9 * np.cumprod(0.1 ** np.arange(1, 5))]
    )
    assert phase_summary(linear, 0.0)["linear_rate"] == pytest.approx(0.5)
    assert phase_summary(linear, 0.0)["tail_rate"] == pytest.approx(0.5)
    s = phase_summary(superlinear, 0.0)
    assert s["tail_rate"] < 0.05 < s["linear_rate"]


def test_diagnostics_along_the_run():
    p = cubic_chain(8, 1e-2)
    x_star, f_star = newton_solve(p.f, p.grad, p.hess, np.zeros(8))
    res = bfgs(
        p.f, p.grad, np.zeros(8), B0=3.0, hess=p.hess, x_star=x_star, f_star=f_star, M=p.M_bound
    )
    assert res.psi_hist[0] == pytest.approx(psi(3.0 * np.eye(8), p.hess(x_star)))
    assert np.all(res.psi_hist >= -1e-9) and res.psi_hist[-1] < res.psi_hist[0]
    assert res.delta0 == pytest.approx(p.f(np.zeros(8)) - f_star)
    assert res.M_sqrt_delta0 == pytest.approx(p.M_bound * np.sqrt(res.delta0))
    lam = res.newton_decrement_hist
    assert lam.shape == (res.nit + 1,) and lam[-1] < 1e-6 * lam[0]
    assert 2 * (res.f_hist[-3] - f_star) == pytest.approx(lam[-3] ** 2, rel=0.1)  # f - f* ~ lam^2/2


def test_reproduce_smoke(tmp_path):
    results = reproduce(quick=True, out=tmp_path, dim=6)
    affine = results["affine"]
    assert len({row["BFGS, B0 mapped: iters"] for row in affine}) == 1  # exact invariance
    assert affine[-1]["Psi(B0_bar), B0 = I"] > affine[0]["Psi(B0_bar), B0 = I"]
    assert (tmp_path / "scbfgs.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_smoke(tmp_path):
    results = bench(out=tmp_path, dims=[20, 40])
    assert [r["d"] for r in results["rows"]] == [20, 40]
    assert all(r["iters"] > 0 and r["scipy iters"] > 0 for r in results["rows"])
