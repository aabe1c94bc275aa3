import numpy as np
import torch

from hbp.data import synth_lengths
from hbp.groups import GroupConfig, assign_to_groups, best_settings, select_groups
from paperkit.testing import assert_param_error


def test_assign_to_smallest_fitting_group():
    groups = [GroupConfig(16384, 1), GroupConfig(131072, 8), GroupConfig(32768, 2)]  # unsorted
    idx = assign_to_groups([1, 16384, 16385, 32768, 32769, 131072], groups)
    assert idx.dtype == torch.int64
    assert idx.tolist() == [0, 0, 2, 2, 1, 1]


def test_assign_brute_force():
    rng = np.random.default_rng(0)
    sizes = [8, 32, 16, 64]
    ell = rng.integers(1, 65, size=200)
    idx = assign_to_groups(ell, sizes).numpy()
    for length, g in zip(ell, idx, strict=True):
        fitting = [i for i, s in enumerate(sizes) if s >= length]
        assert g == min(fitting, key=lambda i: sizes[i])


def test_over_long_sample_raises():
    assert_param_error(assign_to_groups, [10, 40000], [16384, 32768], param="lengths")
    assert_param_error(assign_to_groups, [10, 0], [16384], param="lengths")


def test_select_groups_under_the_preset(preset):
    ell = synth_lengths(5000, seed=0)
    groups = select_groups(ell, preset)
    assert 1 <= len(groups) <= 3
    assert groups[-1].pack_len >= ell.max()
    assert [g.pack_len for g in groups] == sorted(g.pack_len for g in groups)
    for g in groups:  # every group's settings fit its longest pack
        assert preset.fits(g.pack_len, g.sp, g.ckpt)
    # short packs need no SP: the shortest group runs without it
    assert groups[0].sp == 1


def test_select_groups_beats_every_single_length(preset):
    """The selected groups' estimated GPU-seconds are <= those of one 128K group."""
    from hbp.cost import pack_stats
    from hbp.packing import greedy_fill

    ell = synth_lengths(3000, seed=4)

    def gpu_seconds(groups):
        member = assign_to_groups(ell, groups).numpy()
        total = 0.0
        for g, group in enumerate(groups):
            sub = ell[member == g]
            if sub.size:
                t, a = pack_stats(sub, greedy_fill(sub, group.pack_len))
                total += group.sp * preset.time_from_stats(t, a, group.sp, group.ckpt).sum()
        return total

    single = [best_settings(131072, preset)]
    assert gpu_seconds(select_groups(ell, preset)) < gpu_seconds(single)


def test_best_settings_prefers_no_sp_when_it_fits(preset):
    assert best_settings(8192, preset) == GroupConfig(8192, 1, False)
    assert best_settings(10**7, preset) is None


def test_select_groups_bad_input(preset):
    assert_param_error(select_groups, [10, 200000], preset, param="lengths")
    assert_param_error(select_groups, [10, 20], preset, max_groups=0, param="max_groups")
