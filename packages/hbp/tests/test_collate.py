import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from hbp.collate import IGNORE_INDEX, HBPBatchSampler, block_diagonal_mask, pack_collate
from hbp.groups import GroupConfig
from hbp.model import TinyCausalLM, varlen_attention
from hbp.schedule import HBPScheduler
from paperkit.testing import assert_close, assert_param_error


def test_pack_collate_boundaries_positions_labels():
    batch = pack_collate([torch.tensor([5, 6, 7]), torch.tensor([8, 9])])
    assert batch.cu_seqlens.tolist() == [0, 3, 5]
    assert batch.position_ids.tolist() == [[0, 1, 2, 0, 1]]
    assert batch.labels.tolist() == [[6, 7, IGNORE_INDEX, 9, IGNORE_INDEX]]
    assert batch.loss_mask.sum() == 3


def test_block_diagonal_mask():
    mask = block_diagonal_mask(torch.tensor([0, 2, 5]))
    expected = torch.tensor(
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [0, 0, 1, 0, 0],
            [0, 0, 1, 1, 0],
            [0, 0, 1, 1, 1],
        ],
        dtype=torch.bool,
    )
    assert torch.equal(mask, expected)


def test_varlen_attention_equals_masked_attention():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 9, 4, generator=g, dtype=torch.float64) for _ in range(3))
    cu = torch.tensor([0, 4, 5, 9])
    ref = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=block_diagonal_mask(cu)
    )
    assert_close(varlen_attention(q, k, v, cu), ref, rtol=0, atol=1e-12)


def test_packed_model_equals_samples_alone():
    torch.manual_seed(0)
    model = TinyCausalLM(vocab=20, dim=16, depth=2, heads=2, max_len=32).double()
    samples = [torch.randint(0, 20, (n,)) for n in (5, 1, 9)]
    packed = pack_collate(samples)
    out = model(packed.input_ids, packed.position_ids, packed.cu_seqlens)
    alone = [
        model(b.input_ids, b.position_ids, b.cu_seqlens)
        for b in map(pack_collate, [[s] for s in samples])
    ]
    assert_close(out, torch.cat(alone, dim=1), rtol=0, atol=1e-12)


def test_dataloader_over_all_ranks_sees_every_sample_once():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 40, size=60)
    dataset = [torch.arange(int(n)) for n in lengths]
    small = [i for i in range(60) if lengths[i] <= 16]
    large = [i for i in range(60) if lengths[i] > 16]
    groups = [GroupConfig(32, 1), GroupConfig(64, 2)]
    packs = [[small[i : i + 2] for i in range(0, len(small), 2)], [[i] for i in large]]
    sched = HBPScheduler(groups, packs, 4, seed=0, lengths=lengths)
    seen = []
    for rank in range(4):
        loader = DataLoader(
            dataset, batch_sampler=HBPBatchSampler(sched, rank), collate_fn=pack_collate
        )
        for batch in loader:
            assert batch.cu_seqlens[-1] == batch.input_ids.shape[1]
            seen.append(batch.input_ids.shape[1])
    # SP-2 packs are seen by both devices of their SP group, SP-1 packs by one
    assert sum(seen) == lengths[small].sum() + 2 * lengths[large].sum()


def test_bad_inputs():
    assert_param_error(pack_collate, [], param="samples")
    assert_param_error(pack_collate, [torch.tensor([], dtype=torch.long)], param="samples")
    assert_param_error(block_diagonal_mask, torch.tensor([0, 3, 2]), param="cu_seqlens")
    assert_param_error(block_diagonal_mask, torch.tensor([1, 3]), param="cu_seqlens")
    sched = HBPScheduler([GroupConfig(8)], [[[0]]], 2)
    assert_param_error(HBPBatchSampler, sched, 2, param="rank")


@pytest.mark.parametrize("n", [1, 3])
def test_sampler_len(n):
    sched = HBPScheduler([GroupConfig(8)], [[[i] for i in range(n * 2)]], 2)
    assert len(HBPBatchSampler(sched, 0)) == n
