"""The circuit: connectivity, PN normalisation, LI monotonicity, determinism, argument errors."""

import pytest
import torch

from flyolf import (
    CircuitConfig,
    FlyCircuit,
    calibrate,
    calibration_odors,
    connectivity,
    pn_rates,
    train_readout,
)

W_PK = 0.0019  # about the calibrated weight of the default circuit (25% coding level)


def test_every_kc_has_pn_per_kc_distinct_inputs_fixed_by_the_seed():
    cfg = CircuitConfig(n_kc=500, pn_per_kc=7, seed=3)
    J = connectivity(cfg)
    assert J.shape == (500, 50)
    assert set(J.unique().tolist()) == {0.0, 1.0}
    assert (J.sum(dim=1) == 7).all()
    assert torch.equal(J, connectivity(cfg))
    assert not torch.equal(J, connectivity(cfg.replace(seed=4)))
    assert torch.equal(FlyCircuit(cfg.replace(w_pk=W_PK)).J, J)


def test_pn_rates_follow_the_olsen_formula():
    r = torch.tensor([[0.0, 12.0, 60.0, 200.0], [5.0, 5.0, 5.0, 5.0]], dtype=torch.float64)
    out = pn_rates(r)
    # closed form by hand (Olsen et al. 2010, Eqs. 2, 4-6): 165 r^1.5 / (r^1.5 + 12^1.5 + s^1.5),
    # s = 10.63 * LFP and LFP = (summed rate of 24 ORN types) / 190 = 24 * mean_row / 190
    for i in range(2):
        lfp = 24 * r[i].mean().item() / 190
        for j in range(4):
            x = r[i, j].item()
            expected = 165 * x**1.5 / (x**1.5 + 12**1.5 + (10.63 * lfp) ** 1.5)
            assert out[i, j].item() == pytest.approx(expected, rel=1e-12)
    assert (out < 165).all()
    big = torch.tensor([[1e6, 0.0]], dtype=torch.float64)
    assert (pn_rates(big) <= 165).all()
    assert torch.equal(pn_rates(r, normalization=False), r)


def test_lateral_inhibition_lowers_the_total_kc_count_monotonically():
    cfg = CircuitConfig(n_kc=1000, w_pk=W_PK)
    odors = calibration_odors(cfg, 32)
    g = calibrate(cfg, odors, "li", target_coding=0.10, iters=8)
    totals = []
    for scale in (0.0, 0.5, 1.0, 2.0, 4.0):
        circuit = FlyCircuit(cfg.replace(g_li=scale * g))
        out = circuit(odors, generator=torch.Generator().manual_seed(11))
        totals.append(float(out.kc_counts.sum()))
    assert all(a > b for a, b in zip(totals, totals[1:], strict=False)), totals


def test_clean_well_separated_odors_are_learned_perfectly():
    # 5 odors, each driving its own 10 glomeruli at 150 Hz over the 8 Hz spontaneous rate
    protos = torch.full((5, 50), 8.0)
    for c in range(5):
        protos[c, 10 * c : 10 * c + 10] = 150.0
    labels = torch.arange(5).repeat_interleave(10)
    circuit = FlyCircuit(CircuitConfig(n_kc=1000, w_pk=W_PK))
    train = circuit(protos[labels], generator=torch.Generator().manual_seed(1)).kc_counts
    test = circuit(protos[labels], generator=torch.Generator().manual_seed(2)).kc_counts
    assert train_readout(train, labels).score(test, labels) == 1.0


def test_same_seed_gives_identical_spike_counts():
    cfg = CircuitConfig(n_kc=300, w_pk=W_PK, g_li=0.003, g_sfa=0.05, seed=5)
    odors = calibration_odors(cfg, 8)
    a = FlyCircuit(cfg)(odors, record=True)
    b = FlyCircuit(cfg)(odors, record=True)
    assert torch.equal(a.kc_counts, b.kc_counts) and torch.equal(a.kc_spikes, b.kc_spikes)
    assert torch.equal(a.kc_spikes.sum(dim=1), a.kc_counts)
    c = FlyCircuit(cfg)(odors, generator=torch.Generator().manual_seed(99))
    assert not torch.equal(a.kc_counts, c.kc_counts)


def test_sparse_input_gives_the_same_spikes_as_dense():
    cfg = CircuitConfig(n_kc=300, w_pk=W_PK, g_li=0.003, g_sfa=0.05)
    odors = calibration_odors(cfg, 8)
    dense = FlyCircuit(cfg)(odors).kc_counts
    sparse = FlyCircuit(cfg, sparse=True)(odors).kc_counts
    assert torch.equal(dense, sparse)


def test_unset_w_pk_is_calibrated_to_a_25_percent_coding_level():
    circuit = FlyCircuit(CircuitConfig(n_kc=400, steps=60))
    assert circuit.cfg.w_pk is not None and circuit.cfg.w_pk > 0
    odors = calibration_odors(circuit.cfg)
    out = circuit(odors, generator=torch.Generator().manual_seed(circuit.cfg.seed + 2))
    assert float((out.kc_counts > 0).float().mean()) == pytest.approx(0.25, abs=0.01)


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"dt": 0.005}, "dt"),  # dt >= min(tau) = tau_s
        ({"dt": 0.2}, "dt"),
        ({"pn_per_kc": 51}, "pn_per_kc"),
        ({"n_kc": 0}, "n_kc"),
        ({"tau_m": -0.01}, "tau_m"),
    ],
)
def test_bad_configs_are_refused(change, name):
    with pytest.raises(ValueError, match=f"'{name}'"):
        CircuitConfig(**change)
    cfg = CircuitConfig(w_pk=W_PK)
    for key, value in change.items():
        setattr(cfg, key, value)  # changed after construction: the entry points check again
    with pytest.raises(ValueError, match=f"'cfg.{name}'"):
        connectivity(cfg)


def test_bad_rates_are_refused():
    circuit = FlyCircuit(CircuitConfig(n_kc=50, w_pk=W_PK))
    with pytest.raises(ValueError, match="'orn_rates'.*non-negative"):
        circuit(torch.full((2, 50), -1.0))
    with pytest.raises(ValueError, match="'orn_rates'"):
        circuit(torch.full((2, 49), 10.0))  # wrong n_orn
