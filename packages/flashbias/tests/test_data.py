import torch

from flashbias.data import pair_bias, swin_cpb_bias
from paperkit.testing import assert_close, assert_param_error


def test_swin_bias_shape_range_and_translation_invariance():
    bias = swin_cpb_bias(4, 3, seed=0)
    assert bias.shape == (3, 16, 16)
    assert float(bias.min()) > 0 and float(bias.max()) < 16  # 16 * sigmoid
    # a relative-position bias: equal for pairs with the same offset, (0,0)->(1,1) and (1,1)->(2,2)
    assert_close(bias[:, 0, 5], bias[:, 5, 10], rtol=0, atol=0)


def test_generators_are_seeded():
    assert torch.equal(swin_cpb_bias(5, 2, seed=3), swin_cpb_bias(5, 2, seed=3))
    assert not torch.equal(swin_cpb_bias(5, 2, seed=3), swin_cpb_bias(5, 2, seed=4))
    a, b = pair_bias(20, 8, 2, seed=1), pair_bias(20, 8, 2, seed=1)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not torch.equal(a.bias, pair_bias(20, 8, 2, seed=2).bias)


def test_pair_bias_is_the_linear_head_of_the_pair_representation():
    data = pair_bias(12, 8, 3, seed=0)
    assert data.pair.shape == (1, 12, 12, 8) and data.bias.shape == (1, 3, 12, 12)
    assert_close(data.bias, (data.pair @ data.weight).permute(0, 3, 1, 2), rtol=0, atol=1e-6)
    assert data.row_features().shape == (1, 12, 24)


def test_bad_sizes():
    assert_param_error(swin_cpb_bias, 0, 2, param="window")
    assert_param_error(pair_bias, 8, 0, 2, param="c_z")
