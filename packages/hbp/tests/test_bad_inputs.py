"""Every public entry point of hbp with one valid call; the shared suite derives the bad ones."""

import os

import numpy as np
import pytest
import torch
import torch.distributed as dist

import hbp
from hbp import (
    CostModel,
    GroupConfig,
    HBPBatchSampler,
    HBPScheduler,
    PackedBatch,
    TinyCausalLM,
    assign_to_groups,
    attention_balance_ratio,
    ave_token_loss,
    balance_ranks,
    best_settings,
    block_diagonal_mask,
    communication_ratio,
    greedy_fill,
    mean_loss,
    measured_epochs,
    naive_pack,
    pack_collate,
    pack_stats,
    padding_ratio,
    plan_steps,
    rank_loads,
    round_robin,
    run_ddp_demo,
    run_sp_demo,
    select_groups,
    simulate,
    sorted_pack,
    sp_attention,
    step_gradient,
    synth_lengths,
    varlen_attention,
)
from hbp.train import epoch_problem
from paperkit.testing import BadInputs, Call, fresh, run_case

PRESET = CostModel.preset("8b")
HUGE = 10**12  # a count whose lists or weights would not fit in memory
COSTS = dict(
    c_lin=1.0, c_attn=0.5, c_comm=0.1, c_fix=0.01, m_tok=1.0, m_static=0.0, m_ckpt=0.5,
    device_mem=1e6,
)  # fmt: skip


def _ids(*rows):
    return torch.tensor(rows, dtype=torch.int64)


def _qkv(T=5):
    g = torch.Generator().manual_seed(0)
    return {x: torch.randn(1, 2, T, 4, generator=g, dtype=torch.float64) for x in "qkv"}


QKV_SHAPES = {"q": "B H T d", "k": "B H T d", "v": "B H T e"}
LOSS = dict(
    token_loss=torch.tensor([[1.0, 2.0, 3.0]]),
    loss_mask=_ids([1, 1, 0]),
    shapes={"token_loss": "B T", "loss_mask": "B T"},
    accepts={"token_loss": ["nan", "inf"]},  # a loss propagates NaN by design (hbp.loss)
    bad={"loss_mask": [_ids([1, 2, 0])]},
)
PACKERS = dict(lengths=np.array([6, 5, 4, 3, 2]), pack_len=10)
PACKER_BAD = {"lengths": [np.array([5, 20]), np.array([5, 0])], "pack_len": [0]}
MODEL_CALL = {
    "input_ids": _ids([1, 2, 3, 4, 5]),
    "position_ids": _ids([0, 1, 2, 0, 1]),
    "cu_seqlens": torch.tensor([0, 3, 5]),
}


def _scheduler():
    return HBPScheduler([GroupConfig(8)], [[[0], [1], [2]]], n_ranks=2)


SUITE = BadInputs(
    hbp,
    [
        Call(
            CostModel,
            **COSTS,
            bad={"c_lin": [-1.0], "m_ckpt": [0.0, 1.5], "device_mem": [0.0]},
        ),
        Call(
            CostModel,
            name="CostModel.pack_time",
            method="pack_time",
            call={"lengths": np.array([3, 4]), "sp": 2, "ckpt": True},
            bad={"sp": [0]},
            **COSTS,
        ),
        Call(
            CostModel,
            name="CostModel.time_from_stats",
            method="time_from_stats",
            call={"t": np.array([10.0, 20.0]), "a": np.array([100.0, 400.0]), "sp": 1},
            shapes={"t": "P", "a": "P"},
            bad={"t": [np.array([-1.0, 2.0])]},
            **COSTS,
        ),
        Call(
            CostModel,
            name="CostModel.calibrate",
            method="calibrate",
            call={
                "measurements": [([4], 1, False, 0.1), ([8], 1, False, 0.2), ([2, 9], 1, True, 0.3)]
            },
            bad={"measurements": [[([4], 1, False, 0.1)], [([4], 1, False, float("nan"))] * 3]},
            **COSTS,
        ),
        Call(GroupConfig, pack_len=1024, sp=2, ckpt=True, bad={"pack_len": [0], "sp": [0]}),
        Call(
            HBPScheduler,
            groups=[GroupConfig(8), GroupConfig(16, 2)],
            packs_per_group=[[[0], [1]], [[2]]],
            n_ranks=2,
            curriculum_warmup=0.1,
            seed=0,
            lengths=np.array([5, 6, 12]),
            cost=PRESET,
            accum_steps=1,
            bad={
                "groups": [[], ["8"]],
                "packs_per_group": [[[[0], [1]]], [[[0], [7]], [[2]]], [[[0], []], [[2]]]],
                "n_ranks": [0, 3, HUGE],
                "curriculum_warmup": [1.0, -0.1],
                "seed": [-1],
                "cost": ["8b"],
                "accum_steps": [0, [1]],
            },
        ),
        Call(
            HBPBatchSampler,
            scheduler=fresh(_scheduler),
            rank=1,
            bad={"scheduler": ["x"], "rank": [-1, 2]},
        ),
        Call(
            PackedBatch,
            input_ids=_ids([5, 6, 7, 8, 9]),
            labels=_ids([6, 7, -100, 9, -100]),
            position_ids=_ids([0, 1, 2, 0, 1]),
            cu_seqlens=torch.tensor([0, 3, 5]),
            shapes={"input_ids": "B T", "labels": "B T", "position_ids": "B T"},
            bad={"cu_seqlens": [torch.tensor([0, 3]), torch.tensor([0, 4, 3, 5])]},
        ),
        Call(
            TinyCausalLM,
            vocab=16,
            dim=8,
            depth=1,
            heads=2,
            max_len=16,
            call=MODEL_CALL,
            shapes={"input_ids": "B T", "position_ids": "B T"},
            bad={
                "vocab": [0, HUGE],
                "dim": [3, 10**7],
                "depth": [0, 10**9],
                "heads": [0],
                "max_len": [HUGE],
                "input_ids": [_ids([1, 2, 3, 4, 16])],
                "position_ids": [_ids([0, 1, 2, 0, 16])],
                "cu_seqlens": [torch.tensor([0, 3]), torch.tensor([0, 3, 2, 5])],
            },
        ),
        Call(
            assign_to_groups,
            lengths=np.array([100, 20000, 9000]),
            groups=[GroupConfig(16384), GroupConfig(32768, 2)],
            bad={"lengths": [np.array([40000])], "groups": [[], [0], "16384"]},
        ),
        Call(
            attention_balance_ratio,
            costs_per_rank=np.array([4.0, 2.0, 2.0, 0.0]),
            bad={"costs_per_rank": [np.array([1.0, -1.0])]},
        ),
        Call(ave_token_loss, n_tokens_global=12, dp_size=2, **LOSS),
        Call(mean_loss, **LOSS),
        Call(
            balance_ranks,
            packs=[[0], [1], [2]],
            lengths=np.array([9, 5, 4]),
            n_ranks=2,
            cost=PRESET,
            sp=1,
            ckpt=False,
            bad={
                "packs": [[[0], [3]], [[0], []], [[0.5]], []],
                "n_ranks": [0, HUGE],
                "cost": ["8b"],
                "sp": [0],
            },
        ),
        Call(
            best_settings,
            pack_len=8192,
            cost=PRESET,
            sp_options=(1, 2, 4, 8),
            avg_stats=(8192.0, 1e7),
            bad={"pack_len": [0], "avg_stats": [(-1.0, 1.0), (1.0,)], "sp_options": [(0, 2)]},
        ),
        Call(
            block_diagonal_mask,
            cu_seqlens=torch.tensor([0, 2, 5]),
            causal=True,
            bad={"cu_seqlens": [torch.tensor([0, 3, 2]), torch.tensor([1, 3]), _ids(0, 10**6)]},
        ),
        Call(
            communication_ratio,
            lengths=np.array([100, 2000, 50000]),
            sp_of_sample=np.array([1, 2, 8]),
            L0=80000,
            shapes={"lengths": "N", "sp_of_sample": "N"},
            bad={"sp_of_sample": [np.array([0, 1, 1])], "L0": [0]},
        ),
        Call(
            epoch_problem,
            n_samples=20,
            pack_len=64,
            seed=0,
            bad={"n_samples": [0], "pack_len": [2], "seed": [-1]},
        ),
        Call(greedy_fill, balance="attn", bad=PACKER_BAD, **PACKERS),
        Call(naive_pack, bad=PACKER_BAD, **PACKERS),
        Call(sorted_pack, bad=PACKER_BAD, **PACKERS),
        Call(
            measured_epochs,
            world_size=1,
            n_samples=20,
            pack_len=64,
            accum=1,
            seed=0,
            bad={
                "world_size": [0, 10**6],
                "n_samples": [0, HUGE],
                "pack_len": [66, 10**7],
                "accum": [0],
                "seed": [-1],
            },
        ),
        Call(
            pack_collate,
            samples=[_ids(5, 6, 7), _ids(8, 9)],
            bad={
                "samples": [
                    [],
                    "ab",
                    [torch.tensor([], dtype=torch.int64)],
                    [torch.tensor([1.5])],
                    [_ids(-1, 2)],
                    [_ids([1, 2])],
                ]
            },
        ),
        Call(
            pack_stats,
            lengths=np.array([3, 4, 5]),
            packs=[[0, 1], [2]],
            bad={"packs": [[[0, 3]], [[0], []], [[0.5]], [], "01"]},
        ),
        Call(
            padding_ratio,
            packs=[[6, 4], [5, 3]],
            pack_len=10,
            bad={"packs": [[[6, 5]], [[0]], []], "pack_len": [0]},
        ),
        Call(
            plan_steps,
            plan="naive",
            lengths=np.array([3, 4, 5, 6]),
            pack_len=8,
            world_size=2,
            accum=1,
            cost=PRESET,
            bad={
                "lengths": [np.array([3, 9])],
                "pack_len": [2],
                "world_size": [0, HUGE],
                "accum": [0],
                "cost": ["8b"],
            },
        ),
        Call(
            rank_loads,
            ranks=[[0, 2], [1], []],
            per_pack=np.array([1.0, 2.0, 3.0]),
            bad={"ranks": [[[0, 3]], [], "01", [[0.5]]]},
        ),
        Call(round_robin, n_packs=5, n_ranks=2, bad={"n_packs": [-1, HUGE], "n_ranks": [0, HUGE]}),
        Call(run_ddp_demo, world_size=1, seed=0, bad={"world_size": [0, 10**6], "seed": [-1]}),
        Call(run_sp_demo, world_size=1, seed=0, bad={"world_size": [0, 3], "seed": [-1]}),
        Call(
            select_groups,
            lengths=np.array([100, 9000, 20000]),
            cost=PRESET,
            candidates=(8192, 16384, 32768),
            max_groups=2,
            sp_options=(1, 2),
            bad={
                "lengths": [np.array([40000])],
                "cost": ["8b"],
                "candidates": [tuple(range(32768, 32968))],
                "max_groups": [0],
                "sp_options": [(0,)],
            },
        ),
        Call(
            simulate,
            strategy="naive",
            lengths=synth_lengths(200, max_len=32768, seed=0),
            n_gpus=8,
            cost=PRESET,
            global_tokens=2**16,
            pack_len=32768,
            sp=2,
            candidates=(8192, 32768),
            seed=0,
            bad={
                "lengths": [np.array([40000])],
                "n_gpus": [0, 3, HUGE],
                "cost": ["8b"],
                "global_tokens": [0],
                "pack_len": [0, 100],
                "sp": [0],
                "candidates": [(0, 32768)],
                "seed": [-1],
            },
        ),
        Call(
            sp_attention,
            **_qkv(),
            cu_seqlens=torch.tensor([0, 3, 5]),
            group=None,
            shapes=QKV_SHAPES,
            bad={"cu_seqlens": [torch.tensor([0, 3]), torch.tensor([0, 4, 3, 5])], "group": ["x"]},
        ),
        Call(
            step_gradient,
            model=fresh(lambda: TinyCausalLM(16, 8, 1, 2, max_len=8).double()),
            samples=[_ids(1, 2, 3), _ids(4, 5)],
            packs_per_rank=[[[0]], [[1]]],
            loss="ave_token",
            bad={
                "model": ["x"],
                "samples": [[], [_ids(1, 99)], [torch.tensor([1.5, 2.0])], [_ids(*range(9))]],
                "packs_per_rank": [[], [[[0, 5]]], [[[0]], [[]]]],
            },
        ),
        Call(
            synth_lengths,
            n=100,
            mix=None,
            max_len=131072,
            seed=0,
            bad={
                "n": [0, HUGE],
                "max_len": [0],
                "seed": [-1],
                "mix": [{}, {"a": (1.0, float("nan"), 1.0)}, {"a": (-1.0, 1.0, 1.0)}, "abc"],
            },
        ),
        Call(
            varlen_attention,
            **_qkv(),
            cu_seqlens=torch.tensor([0, 3, 5]),
            shapes=QKV_SHAPES,
            bad={"cu_seqlens": [torch.tensor([0, 3]), torch.tensor([0, 4, 3, 5])]},
        ),
    ],
    exempt={
        "Batch": "the record HBPScheduler yields (group, settings, packs); not built by users",
        "GatherSequence": "an autograd.Function applied by sp_attention, which checks its inputs",
        "SimulationReport": "the record simulate returns; not built by users",
    },
)

#: Their valid calls spawn gloo processes (seconds each): run with ``-m slow``.
SPAWNS = {"measured_epochs", "run_ddp_demo", "run_sp_demo"}


@pytest.fixture(scope="module", autouse=True)
def _process_group(tmp_path_factory):
    """sp_attention needs an initialised torch.distributed: a one-process gloo group."""
    store = os.path.join(tmp_path_factory.mktemp("gloo"), "store")
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            c,
            id=c.id,
            marks=[pytest.mark.slow] if c.kind == "valid" and c.call.name in SPAWNS else [],
        )
        for c in SUITE.cases()
    ],
)
def test_bad_input(case):
    run_case(case)


test_every_public_name_is_covered = SUITE.coverage_test()
