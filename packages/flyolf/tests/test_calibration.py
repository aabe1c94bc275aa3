"""Calibration hits its targets: LI coding level (also on fresh odors), SFA spike count."""

import pytest
import torch

from flyolf import CircuitConfig, FlyCircuit, calibrate, calibration_odors, odor_prototypes

W_PK = 0.0019


@pytest.fixture(scope="module")
def calibrated():
    cfg = CircuitConfig(n_kc=1000, w_pk=W_PK)
    odors = calibration_odors(cfg)  # 64 clean odors
    g_li = calibrate(cfg, odors, "li", target_coding=0.10)
    return cfg, odors, g_li


def _coding(cfg, odors, seed):
    counts = FlyCircuit(cfg)(odors, generator=torch.Generator().manual_seed(seed)).kc_counts
    return float((counts > 0).float().mean()), counts


def test_li_reaches_the_target_coding_level(calibrated):
    cfg, odors, g_li = calibrated
    coding, _ = _coding(cfg.replace(g_li=g_li), odors, cfg.seed + 2)  # the calibration's spikes
    assert coding == pytest.approx(0.10, abs=0.01)


def test_li_coding_level_holds_on_a_fresh_batch_of_odors(calibrated):
    cfg, _, g_li = calibrated
    # 128 new odors in groups of 4 sharing a background, from seeds the calibration never used
    fresh = torch.cat([odor_prototypes(4, 50, seed=50_000 + i) for i in range(32)])
    coding, _ = _coding(cfg.replace(g_li=g_li), fresh, 77)
    assert coding == pytest.approx(0.10, abs=0.01)


def test_sfa_reaches_the_target_spike_count(calibrated):
    cfg, odors, g_li = calibrated
    _, control = _coding(cfg, odors, cfg.seed + 2)
    floor = float((control > 0).sum(dim=1).float().mean())
    target = 0.5 * (floor + float(control.sum(dim=1).mean()))  # halfway to the floor
    g_sfa = calibrate(cfg, odors, "sfa", target_count=target)
    _, counts = _coding(cfg.replace(g_sfa=g_sfa), odors, cfg.seed + 2)
    assert float(counts.sum(dim=1).mean()) == pytest.approx(target, rel=0.05)


def test_sfa_target_below_one_spike_per_responding_kc_is_refused(calibrated):
    cfg, odors, _ = calibrated
    with pytest.raises(ValueError, match="'target_count'.*fires once"):
        calibrate(cfg, odors, "sfa", target_count=1.0)
