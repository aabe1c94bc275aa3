import pytest

import fadapter.bench
import fadapter.reproduce
from fadapter.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

TINY = {
    "pre_traj": 2,
    "pre_epochs": 1,
    "ft_traj": 2,
    "test_traj": 2,
    "ft_epochs": 1,
    "seeds": 1,
    "methods": ["F-Adapter (d=4)", "Adapter (d=15)", "LoRA (r=8)"],
    "depths": (1, 2),
    "probe_steps": 2,
    "widths": (1, 2, 3),
    "width_steps": 2,
}


@pytest.mark.slow  # data for 6 trajectories, 4 trainings and both probes: about a minute here
def test_quick_reproduction_at_tiny_settings_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(fadapter.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("F-Adapter has the lowest error")
    assert len(claims) == 7 and all(c["verdict"] in VERDICTS for c in claims)
    rows = {r["method"]: r for r in doc["tables"]["adaptation"]}
    assert rows["F-Adapter (d=4)"]["trainable"] == 25_920
    assert rows["Adapter (d=15)"]["trainable"] == 25_248
    assert rows["LoRA (r=8)"]["trainable"] == 28_672
    assert all(0 < rows[m]["L2RE 1-step"] < 10 for m in TINY["methods"])
    assert (tmp_path / "fadapter.png").stat().st_size > 0


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(
        fadapter.bench.RUNS,
        True,
        {"grids": [32, 34], "batch": 1, "min_time": 0.0, "min_repeats": 1},
    )
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    impls = {(r["impl"], r["size"]) for r in doc["measurements"]}
    assert impls == {(i, g) for i in fadapter.bench.IMPLS for g in (32, 34)}
    assert all(r["seconds"] > 0 and r["cpu_seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 2 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert {r["impl"]: r["trainable"] for r in doc["tables"]["trainable"]}["+F-Adapter"] == 25_920


def _row(name, one, roll, bands, trainable=25_000):
    return {
        "method": name,
        "trainable": trainable,
        "% of backbone": 32.0,
        "L2RE 1-step": one,
        "L2RE 10-step": roll,
        **dict(zip(("E_low", "E_mid1", "E_mid2", "E_high"), bands, strict=True)),
    }


def test_claim_verdicts_follow_the_numbers():
    rows = [
        _row("F-Adapter (d=4)", 0.10, 0.30, (0.1, 0.2, 0.5, 1.0)),
        _row("Adapter (d=15)", 0.12, 0.29, (0.2, 0.3, 0.5, 1.0)),
        _row("LoRA (r=2)", 0.20, 0.40, (0.3, 0.3, 0.5, 1.0)),
        _row("LoRA (r=8)", 0.19, 0.39, (0.3, 0.3, 0.5, 1.0)),
    ]
    depth = [{"depth": d, "rel_error": e} for d, e in ((1, 0.2), (2, 0.3), (4, 0.25))]
    width = [{"width": d, "rel_error": 0.5**d} for d in (1, 2, 3)]
    claims = fadapter.reproduce.claims(rows, depth, width)
    verdicts = [c.verdict for c in claims]
    # lowest 1-step, not lowest rollout; beats adapter in 1-step only; low bands better;
    # LoRA 2 -> 8 gains 5% (< 10%) and stays worse; depth not monotone; exact geometric decay
    assert verdicts == ["partly", "partly", "held", "held", "not held", "held", "not testable here"]


def test_claims_compare_every_matched_pair():
    rows = [
        _row("F-Adapter (d=4)", 0.10, 0.30, (0.1, 0.2, 0.5, 1.0)),
        _row("Adapter (d=15)", 0.12, 0.31, (0.2, 0.3, 0.5, 1.0)),
        _row("F-Adapter (d=4) +MLP", 0.09, 0.28, (0.3, 0.3, 0.5, 1.0)),
        _row("Adapter (d=15) +MLP", 0.08, 0.27, (0.2, 0.2, 0.5, 1.0)),
        _row("LoRA (r=2)", 0.20, 0.40, (0.3, 0.3, 0.5, 1.0)),
        _row("LoRA (r=8)", 0.10, 0.35, (0.3, 0.3, 0.5, 1.0)),
    ]
    depth = [{"depth": d, "rel_error": e} for d, e in ((1, 0.2), (2, 0.3))]
    width = [{"width": d, "rel_error": 0.5**d} for d in (1, 2, 3)]
    verdicts = [c.verdict for c in fadapter.reproduce.claims(rows, depth, width)]
    # the +MLP vanilla adapter is the best PEFT method; F-Adapter wins the plain pair only;
    # LoRA improves 50% with rank (no plateau) and stays worse than the best adapter (0.08)
    assert verdicts[:4] == ["not held", "partly", "partly", "partly"]


def test_fourier_share_measures_each_afno_branch():
    import torch

    from fadapter import OperatorNet
    from fadapter.ablation import fourier_share

    torch.manual_seed(0)
    net = OperatorNet(in_frames=2, width=8, depth=2, num_blocks=2, modes=3)
    with torch.no_grad():  # block 1's Fourier branch outputs zero: y = x there
        for p in net.blocks[1].filter.parameters():
            p.zero_()
    shares = fourier_share(net, torch.randn(2, 16, 16, 2))
    assert len(shares) == 2 and shares[0] > 1e-4 and shares[1] < 1e-6
