import numpy as np
import pytest

from hbp.cost import PRESET_8B_ASSUMPTIONS, CostModel
from paperkit.testing import assert_close, assert_param_error


def test_preset_from_assumptions(preset):
    p = PRESET_8B_ASSUMPTIONS
    # 6 N FLOPs per token; 6 d L FLOPs per unit of sum(l^2); both at the stated throughput
    assert_close(preset.c_lin, 6 * p["params"] / p["gpu_flops"], rtol=1e-15, atol=0)
    assert_close(preset.c_attn, 6 * 4096 * 32 / p["gpu_flops"], rtol=1e-15, atol=0)
    assert_close(preset.m_tok, 34 * 4096 * 32, rtol=1e-15, atol=0)


def test_time_formula(token_cost):
    model = CostModel(2.0, 0.5, 3.0, 1.0, 1.0, 0.0, 0.5, 1e9)
    # (2*10 + 0.5*(36+16)) / 2 * 1.33 + 3*10*(1/2) + 1
    expected = (20 + 26) / 2 * 1.33 + 15 + 1
    assert_close(model.pack_time([6, 4], sp=2, ckpt=True), expected, rtol=1e-14, atol=0)
    assert_close(model.pack_time([6, 4]), 20 + 26 + 1, rtol=1e-14, atol=0)


@pytest.mark.parametrize("sp", [1, 2, 4, 8])
@pytest.mark.parametrize("ckpt", [False, True])
def test_monotone(preset, sp, ckpt):
    """More tokens never take less time; higher SP never uses more memory."""
    rng = np.random.default_rng(sp)
    for _ in range(50):
        ell = list(rng.integers(1, 20000, size=int(rng.integers(1, 6))))
        more = [*ell, int(rng.integers(1, 20000))]
        assert preset.pack_time(more, sp, ckpt) >= preset.pack_time(ell, sp, ckpt)
        longer = [ell[0] + 1, *ell[1:]]
        assert preset.pack_time(longer, sp, ckpt) >= preset.pack_time(ell, sp, ckpt)
    tokens = np.linspace(1, 2e5, 20)
    for higher in (2 * sp, 4 * sp):
        assert np.all(preset.memory(tokens, higher, ckpt) <= preset.memory(tokens, sp, ckpt))
    assert np.all(preset.memory(tokens, sp, True) <= preset.memory(tokens, sp, False))


def test_fits_and_max_tokens(preset):
    for sp in (1, 2, 8):
        for ckpt in (False, True):
            top = preset.max_tokens(sp, ckpt)
            assert preset.fits(top, sp, ckpt) and not preset.fits(top + 1, sp, ckpt)


def test_calibrate_recovers_coefficients(preset):
    truth = CostModel(3e-6, 2e-10, 1e-6, 5e-3, preset.m_tok, preset.m_static, 0.2, 8e10)
    rng = np.random.default_rng(0)
    meas = []
    for _ in range(40):
        ell = list(rng.integers(16, 8192, size=int(rng.integers(1, 8))))
        sp, ckpt = int(rng.choice([1, 2, 4])), bool(rng.integers(2))
        meas.append((ell, sp, ckpt, truth.pack_time(ell, sp, ckpt)))
    fitted = preset.calibrate(meas)
    for name in ("c_lin", "c_attn", "c_comm", "c_fix"):
        assert_close(getattr(fitted, name), getattr(truth, name), rtol=1e-6, atol=1e-15)
    assert fitted.m_tok == preset.m_tok  # memory coefficients kept
    assert_close(fitted.score(meas), 1.0, rtol=0, atol=1e-9)


def test_bad_inputs(preset):
    assert_param_error(CostModel.preset, "70b", param="name")
    assert_param_error(CostModel, -1.0, 0, 0, 0, 1, 0, 0.5, 1e9, param="c_lin")
    assert_param_error(CostModel, 1.0, 0, 0, 0, 1, 0, 0.0, 1e9, param="m_ckpt")
    assert_param_error(preset.pack_time, [10], 0, param="sp")
    assert_param_error(preset.calibrate, [([1], 1, False, 1.0)], param="measurements")
