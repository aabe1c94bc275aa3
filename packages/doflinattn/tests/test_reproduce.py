"""The reproduction and the benchmark at tiny settings write valid results files."""

import subprocess
import sys

import doflinattn.bench
import doflinattn.reproduce
from doflinattn.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

TINY = dict(
    sentences=16,
    budget_per_layer=4,
    steps=2,
    seeds=[0],
    max_points=64,
    syn_n=64,
    syn_draws=1,
    causal=False,
)
TINY_BENCH = dict(lengths=[64, 128, 256], budget_n=32, points=[32, 64], min_time=0.01)


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(doflinattn.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 4 and all(c["verdict"] in VERDICTS for c in claims)
    assert claims[0]["statement"].startswith("At a fixed total feature budget")
    assert claims[3]["verdict"] == "not testable here"  # (c) is for the full run
    rows = doc["tables"]["minilm_layers"]
    assert [r["layer"] for r in rows] == list(range(6))
    assert sum(r["m_dof"] for r in rows) == sum(r["m_uniform"] for r in rows) == 24
    assert all((tmp_path / f).stat().st_size > 0 for f in doc["figures"])


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(doflinattn.bench.RUNS, ("cpu", True), TINY_BENCH)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    cases = {(r["case"], r["impl"]) for r in doc["measurements"]}
    assert {("budget", "uniform"), ("budget", "dof"), ("scaling", "linear")} <= cases
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])


def test_registration_imports_no_torch():
    code = "import sys, doflinattn.cli, doflinattn.paper; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_budget_option_is_checked_before_any_work(capsys):
    from doflinattn.cli import main

    assert main(["reproduce", "--budget", "13"]) == 2  # not a multiple of 12
    assert main(["bench", "--budget", "24"]) == 2  # the option belongs to reproduce
    assert "--budget" in capsys.readouterr().err
