import numpy as np
import pytest

from hbp.data import DEFAULT_MIX, synth_lengths
from hbp.simulator import simulate
from paperkit.testing import assert_param_error, check_seeded_determinism


@pytest.fixture(scope="module")
def reports():
    from hbp.cost import CostModel

    ell = synth_lengths(6000, seed=0)
    cost = CostModel.preset("8b")
    return {s: simulate(s, ell, 32, cost) for s in ("padding", "naive", "sorted", "hbp")}


def test_hbp_is_fastest_and_balanced(reports):
    hbp = reports["hbp"]
    assert all(hbp.time_s < r.time_s for name, r in reports.items() if name != "hbp")
    assert hbp.abr < reports["naive"].abr
    assert reports["naive"].cr == 1.0 and hbp.cr < 1.0
    assert reports["padding"].padding > reports["naive"].padding > hbp.padding - 0.05


def test_step_times_add_up(reports):
    for r in reports.values():
        assert r.step_times.size == r.n_steps == r.step_abr.size
        assert np.isclose(r.step_times.sum(), r.time_s)


def test_synth_lengths_shape():
    ell = synth_lengths(20000, seed=0)
    assert ell.min() >= 1 and ell.max() <= 131072
    assert np.mean(ell <= 4096) > 0.8 and np.mean(ell > 32768) > 0.01
    assert set(DEFAULT_MIX) == {"general_sft", "long_doc", "long_context"}


def test_seeded_determinism(preset):
    check_seeded_determinism(lambda: synth_lengths(500, seed=7))
    ell = synth_lengths(2000, seed=1)
    check_seeded_determinism(lambda: simulate("hbp", ell, 32, preset, seed=5).step_times)


def test_bad_inputs(preset):
    ell = synth_lengths(100, seed=0)
    assert_param_error(simulate, "fifo", ell, 32, preset, param="strategy")
    assert_param_error(simulate, "naive", ell, 12, preset, param="sp")  # 8 does not divide 12
    assert_param_error(simulate, "hbp", ell, 12, preset, param="n_gpus")
    assert_param_error(simulate, "naive", [10, 200000], 32, preset, param="lengths")
    assert_param_error(simulate, "naive", ell, 32, preset, pack_len=0, param="pack_len")
    assert_param_error(synth_lengths, 0, param="n")
    assert_param_error(synth_lengths, 10, {"a": (-1.0, 1.0, 1.0)}, param="mix")
