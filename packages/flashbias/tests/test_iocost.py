import pytest

from flashbias.iocost import hbm_accesses
from paperkit.testing import assert_param_error


def test_dense_bias_adds_nm_reads_and_dominates_for_small_d():
    N = M = 4096
    base = hbm_accesses(N, M, 32, 0, 100 * 1024, dense_bias=False)
    dense = hbm_accesses(N, M, 32, 0, 100 * 1024, dense_bias=True)
    assert dense - base == pytest.approx(N * M)
    factored = hbm_accesses(N, M, 32, 2, 100 * 1024, dense_bias=False)
    assert factored < dense  # a rank-2 factor is cheaper than reading the N x M bias
    # closed form: N (d+R) + N M (d+R)^2 / S with S = 100 KiB / 2 bytes
    assert factored == pytest.approx(N * 34 + N * M * 34**2 / (100 * 512))


def test_bad_arguments():
    assert_param_error(hbm_accesses, 0, 4, 4, 1, 1024, False, param="N")
    assert_param_error(hbm_accesses, 4, 4, 4, -1, 1024, False, param="R")
