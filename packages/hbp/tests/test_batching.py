import itertools

import numpy as np

from hbp.batching import balance_ranks, rank_loads, round_robin
from hbp.cost import pack_stats
from hbp.metrics import attention_balance_ratio
from hbp.packing import greedy_fill
from paperkit.testing import assert_param_error


def test_lpt_beats_round_robin_on_average(preset):
    """Mean ABR over 100 random lognormal instances (not per instance)."""
    abr = {"lpt": [], "rr": []}
    for seed in range(100):
        rng = np.random.default_rng(seed)
        ell = np.ceil(np.exp(rng.normal(8.0, 1.3, size=120))).clip(1, 32768).astype(np.int64)
        packs = greedy_fill(ell, 32768)
        a = pack_stats(ell, packs)[1]
        n_ranks = 4
        lpt = balance_ranks(packs, ell, n_ranks, preset)
        abr["lpt"].append(attention_balance_ratio(rank_loads(lpt, a)))
        abr["rr"].append(attention_balance_ratio(rank_loads(round_robin(len(packs), n_ranks), a)))
    assert np.mean(abr["lpt"]) < np.mean(abr["rr"])


def test_lpt_within_grahams_bound(token_cost):
    """Makespan <= (4/3 - 1/(3R)) OPT; OPT by brute force over all R^n assignments."""
    rng = np.random.default_rng(1)
    for _ in range(40):
        n, R = int(rng.integers(3, 8)), int(rng.integers(2, 4))
        ell = rng.integers(1, 50, size=n)
        packs = [[i] for i in range(n)]
        loads = rank_loads(balance_ranks(packs, ell, R, token_cost), ell.astype(float))
        opt = min(
            max(sum(ell[i] for i in range(n) if assign[i] == r) for r in range(R))
            for assign in itertools.product(range(R), repeat=n)
        )
        assert loads.max() <= (4 / 3 - 1 / (3 * R)) * opt + 1e-9


def test_lpt_optimal_on_hand_made_case(token_cost):
    # times 9, 5, 4 on 2 ranks: LPT puts 9 alone and 5 + 4 together, the optimum 9 / 9
    ranks = balance_ranks([[0], [1], [2]], [9, 5, 4], 2, token_cost)
    assert sorted(sorted(r) for r in ranks) == [[0], [1, 2]]


def test_every_pack_assigned_once(preset):
    ell = np.arange(1, 41)
    packs = greedy_fill(ell, 100)
    ranks = balance_ranks(packs, ell, 3, preset)
    assert sorted(p for r in ranks for p in r) == list(range(len(packs)))


def test_bad_inputs(preset):
    assert_param_error(balance_ranks, [[0]], [5], 0, preset, param="n_ranks")
    assert_param_error(balance_ranks, [[3]], [5], 2, preset, param="packs")
    assert_param_error(balance_ranks, [[0]], [0], 2, preset, param="lengths")
