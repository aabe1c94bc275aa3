import numpy as np
import pytest

from hbp.data import synth_lengths
from hbp.groups import GroupConfig, assign_to_groups
from hbp.packing import greedy_fill
from hbp.schedule import HBPScheduler
from paperkit.testing import assert_param_error


@pytest.fixture
def setup():
    ell = synth_lengths(6000, max_len=131072, seed=0)
    groups = [GroupConfig(16384, 1), GroupConfig(65536, 4), GroupConfig(131072, 8)]
    member = assign_to_groups(ell, groups).numpy()
    packs = []
    for g, group in enumerate(groups):
        ids = np.flatnonzero(member == g)
        packs.append([ids[p].tolist() for p in greedy_fill(ell[ids], group.pack_len)])
    return ell, groups, packs


def test_every_pack_once_and_curriculum(setup, preset):
    """Every pack runs once; the warm-up draws the shortest group only; adaptive SP."""
    ell, groups, packs = setup
    sched = HBPScheduler(groups, packs, 16, curriculum_warmup=0.1, seed=0, lengths=ell, cost=preset)
    batches = list(sched)
    assert len(batches) == len(sched)
    seen = sorted(tuple(p) for b in batches for rank in b.packs_per_rank for p in rank)
    assert seen == sorted(tuple(p) for group in packs for p in group)
    warm = int(np.ceil(0.1 * len(batches)))
    assert {b.group for b in batches[:warm]} == {0}
    assert {b.group for b in batches[warm:]} == {0, 1, 2}  # interleaved after the warm-up
    for b in batches:  # adaptive SP: each batch carries its group's settings and R = n / sp ranks
        assert (b.sp, b.ckpt) == (groups[b.group].sp, groups[b.group].ckpt)
        assert len(b.packs_per_rank) == 16 // b.sp


def test_long_groups_are_spread_over_the_epoch(setup):
    ell, groups, packs = setup
    seq = np.asarray(HBPScheduler(groups, packs, 16, seed=1, lengths=ell).group_sequence())
    positions = np.flatnonzero(seq == 1) / len(seq)
    assert positions.min() < 0.5 < positions.max()


def test_epochs_differ_and_seed_repeats(setup):
    ell, groups, packs = setup
    a = HBPScheduler(groups, packs, 16, seed=3, lengths=ell)
    b = HBPScheduler(groups, packs, 16, seed=3, lengths=ell)
    first = [x.packs_per_rank for x in a]
    assert first == [x.packs_per_rank for x in b]
    a.set_epoch(1)
    assert [x.packs_per_rank for x in a] != first


def test_sp_must_divide_the_world(setup):
    ell, groups, packs = setup
    assert_param_error(HBPScheduler, groups, packs, 12, param="n_ranks")  # 12 % 8 != 0
    assert_param_error(HBPScheduler, groups, packs[:2], 16, param="packs_per_group")
    assert_param_error(HBPScheduler, groups, packs, 16, 1.5, param="curriculum_warmup")
