"""Hierarchical Balance Packing for long-context SFT (NeurIPS 2025, arXiv 2503.07680).

>>> from hbp import greedy_fill
>>> greedy_fill([6, 5, 4, 3, 2], 10)
[[0, 2], [1, 3, 4]]
"""

from hbp.batching import balance_ranks, rank_loads, round_robin
from hbp.collate import HBPBatchSampler, PackedBatch, block_diagonal_mask, pack_collate
from hbp.cost import PRESET_8B_ASSUMPTIONS, CostModel, pack_stats
from hbp.data import DEFAULT_MIX, synth_lengths
from hbp.dist import run_ddp_demo, step_gradient
from hbp.groups import DEFAULT_CANDIDATES, GroupConfig, assign_to_groups, select_groups
from hbp.loss import ave_token_loss, mean_loss
from hbp.measured import measured_epochs, plan_steps
from hbp.metrics import attention_balance_ratio, communication_ratio, padding_ratio
from hbp.model import TinyCausalLM, varlen_attention
from hbp.packing import greedy_fill, naive_pack, sorted_pack
from hbp.schedule import Batch, HBPScheduler
from hbp.simulate import Report, simulate
from hbp.sp import GatherSequence, run_sp_demo, sp_attention

__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_MIX",
    "PRESET_8B_ASSUMPTIONS",
    "Batch",
    "CostModel",
    "GatherSequence",
    "GroupConfig",
    "HBPBatchSampler",
    "HBPScheduler",
    "PackedBatch",
    "Report",
    "TinyCausalLM",
    "assign_to_groups",
    "attention_balance_ratio",
    "ave_token_loss",
    "balance_ranks",
    "block_diagonal_mask",
    "communication_ratio",
    "greedy_fill",
    "mean_loss",
    "measured_epochs",
    "naive_pack",
    "pack_collate",
    "pack_stats",
    "padding_ratio",
    "plan_steps",
    "rank_loads",
    "round_robin",
    "run_ddp_demo",
    "run_sp_demo",
    "select_groups",
    "simulate",
    "sorted_pack",
    "sp_attention",
    "step_gradient",
    "synth_lengths",
    "varlen_attention",
]
