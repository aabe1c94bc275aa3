import math

import numpy as np
import pytest

from hbp.data import synth_lengths
from hbp.packing import greedy_fill, naive_pack, sorted_pack
from paperkit.testing import assert_param_error

PACKERS = [naive_pack, sorted_pack, greedy_fill]


def test_greedy_fill_worked_example():
    # 6 opens a pack, 4 is the longest that fits; 5 opens the next, 3 and 2 fill it
    assert greedy_fill([6, 5, 4, 3, 2], 10) == [[0, 2], [1, 3, 4]]


@pytest.mark.parametrize("packer", PACKERS)
@pytest.mark.parametrize("balance", [None, "attn"])
def test_every_sample_once_and_no_pack_overflows(packer, balance):
    ell = synth_lengths(3000, max_len=16384, seed=1)
    packs = greedy_fill(ell, 16384, balance) if packer is greedy_fill else packer(ell, 16384)
    flat = sorted(i for p in packs for i in p)
    assert flat == list(range(ell.size))
    assert max(ell[p].sum() for p in packs) <= 16384
    assert len(packs) >= math.ceil(ell.sum() / 16384)


def test_greedy_fill_matches_a_naive_reference():
    """The union-find implementation against the literal GreedyFill loop, on random instances."""
    rng = np.random.default_rng(0)
    for _ in range(30):
        ell = rng.integers(1, 30, size=int(rng.integers(1, 40)))
        remaining = sorted(range(ell.size), key=lambda i: (-ell[i], i))
        expected = []
        while remaining:
            pack = [remaining.pop(0)]
            cap = 30 - ell[pack[0]]
            while True:
                fit = [i for i in remaining if ell[i] <= cap]
                if not fit:
                    break
                pick = fit[0]  # longest that fits (ties: lowest index)
                remaining.remove(pick)
                pack.append(pick)
                cap -= ell[pick]
            expected.append(pack)
        got = greedy_fill(ell, 30)
        assert [sorted(p) for p in got] == [sorted(p) for p in expected]


def test_greedy_fill_needs_fewer_packs_than_naive():
    ell = synth_lengths(5000, seed=2)
    assert len(greedy_fill(ell, 131072)) < len(naive_pack(ell, 131072))


def test_attn_balance_evens_attention_cost():
    ell = synth_lengths(4000, max_len=32768, seed=3)
    spread = {}
    for balance in (None, "attn"):
        a = [float((ell[p].astype(float) ** 2).sum()) for p in greedy_fill(ell, 32768, balance)]
        spread[balance] = np.std(a) / np.mean(a)
    assert spread["attn"] < spread[None]


@pytest.mark.parametrize("packer", PACKERS)
def test_bad_inputs(packer):
    assert_param_error(packer, [5, 20], 10, param="lengths")  # longer than the pack
    assert_param_error(packer, [5, 0], 10, param="lengths")  # empty sample
    assert_param_error(packer, [5, 3], 0, param="pack_len")
    assert_param_error(packer, [], 10, param="lengths")


def test_bad_balance():
    assert_param_error(greedy_fill, [1, 2], 10, "tokens", param="balance")
