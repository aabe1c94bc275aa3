import pytest

from hbp.metrics import attention_balance_ratio, communication_ratio, padding_ratio
from paperkit.testing import assert_close, assert_param_error


def test_abr_values():
    # 1 - mean/max = 1 - 2/4
    assert_close(attention_balance_ratio([4, 2, 2, 0]), 0.5, rtol=0, atol=1e-15)
    assert attention_balance_ratio([3, 3, 3]) == 0.0
    assert_close(attention_balance_ratio([1, 0, 0, 0]), 0.75, rtol=0, atol=1e-15)


def test_cr_values():
    lengths = [100, 2000, 50000, 120000]
    assert communication_ratio(lengths, [1, 1, 1, 1], 80000) == 0.0
    assert communication_ratio(lengths, [8, 8, 8, 8], 80000) == 1.0  # naive SP-8 packing
    # only the 2000-token sample pays SP among the short ones: 2000 / 52100
    assert_close(
        communication_ratio(lengths, [1, 2, 1, 8], 80000), 2000 / 52100, rtol=0, atol=1e-15
    )


def test_padding_ratio():
    assert_close(padding_ratio([[6, 4], [5, 3, 2]], 10), 0.0, rtol=0, atol=1e-15)
    assert_close(padding_ratio([[0], [1, 2]], 10, lengths=[6, 5, 3]), 0.3, rtol=0, atol=1e-12)


@pytest.mark.parametrize("costs", [[], [1, -1], [[1, 2]]])
def test_abr_bad_input(costs):
    assert_param_error(attention_balance_ratio, costs, param="costs_per_rank")


def test_cr_bad_input():
    assert_param_error(communication_ratio, [1, 2], [1], 10, param="sp_of_sample")
    assert_param_error(communication_ratio, [1, 2], [1, 1], 0, param="L0")
    assert_param_error(padding_ratio, [[1]], 0, param="pack_len")
