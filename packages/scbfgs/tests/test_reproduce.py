import numpy as np
import pytest

from paperkit.cli import run_bench, run_reproduce
from paperkit.results import VERDICTS
from paperkit.testing import check_results_file
from scbfgs import bfgs, cubic_chain, newton_solve, psi
from scbfgs.cli import main
from scbfgs.paper import PAPER
from scbfgs.reproduce import phase_summary


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
        p.f,
        p.grad,
        np.zeros(8),
        B0=3.0,
        hess=p.hess,
        x_star=x_star,
        f_star=f_star,
        M=p.M_bound,
        track_psi=True,
    )
    assert res.psi_hist[0] == pytest.approx(psi(3.0 * np.eye(8), p.hess(x_star)))
    assert np.all(res.psi_hist >= -1e-9) and res.psi_hist[-1] < res.psi_hist[0]
    assert res.delta0 == pytest.approx(p.f(np.zeros(8)) - f_star)
    assert res.M_sqrt_delta0 == pytest.approx(p.M_bound * np.sqrt(res.delta0))
    lam = res.newton_decrement_hist
    assert lam.shape == (res.nit + 1,) and lam[-1] < 1e-6 * lam[0]
    assert 2 * (res.f_hist[-3] - f_star) == pytest.approx(lam[-3] ** 2, rel=0.1)  # f - f* ~ lam^2/2


def test_reproduce_writes_a_valid_results_file(tmp_path):
    """The quick run, through the command's path: claims as data, in the schema."""
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("From any start and any positive-definite B0")
    assert {c["verdict"] for c in claims} <= set(VERDICTS) and len(claims) == 3
    affine = doc["tables"]["affine"]
    assert len({row["BFGS, B0 mapped: iters"] for row in affine}) == 1  # exact invariance
    assert claims[1]["verdict"] == "held"  # so the rule computes it
    assert affine[-1]["Psi(B0_bar), B0 = I"] > affine[0]["Psi(B0_bar), B0 = I"]
    assert doc["settings"]["cubic_chain"]["d"] == 20
    assert (tmp_path / "scbfgs.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_writes_a_valid_bench_file(tmp_path):
    """The bench at two small dimensions, through the command's path."""
    path = run_bench(PAPER, quick=True, device="cpu", out=tmp_path, overrides={"dims": [20, 40]})
    doc = check_results_file(path)
    solves = [m for m in doc["measurements"] if m["case"] == "solve"]
    assert sorted((m["impl"], m["size"]) for m in solves) == [
        ("scbfgs", 20),
        ("scbfgs", 40),
        ("scipy", 20),
        ("scipy", 40),
    ]
    assert all(m["seconds"] > 0 and m["params"]["iterations"] > 0 for m in solves)
    updates = [m for m in doc["measurements"] if m["case"] == "update"]
    assert {m["impl"] for m in updates} == {
        "in-place update",
        "outer-product form",
        "one pass over H",
    }
    limits = doc["tables"]["update"]
    assert [r["d"] for r in limits] == [20, 40] and all(r["update / limit"] > 0 for r in limits)
    assert doc["claims"][1]["statement"].startswith("The inverse update runs within 3x")
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS)
    assert (tmp_path / "bench.png").is_file()


def test_bench_refuses_a_gpu():
    """No GPU code: the command refuses --device cuda instead of running on the CPU."""
    assert main(["bench", "--device", "cuda"]) == 2
    with pytest.raises(ValueError, match="'device'"):
        run_bench(PAPER, quick=True, device="cuda")
