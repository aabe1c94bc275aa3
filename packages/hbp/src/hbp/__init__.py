"""Hierarchical Balance Packing for long-context SFT (NeurIPS 2025, arXiv 2503.07680).

>>> from hbp import greedy_fill
>>> greedy_fill([6, 5, 4, 3, 2], 10)
[[0, 2], [1, 3, 4]]
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "DEFAULT_CANDIDATES": "groups",
        "DEFAULT_MIX": "data",
        "PRESET_8B_ASSUMPTIONS": "cost",
        "Batch": "schedule",
        "CostModel": "cost",
        "GatherSequence": "sp",
        "GroupConfig": "groups",
        "HBPBatchSampler": "collate",
        "HBPScheduler": "schedule",
        "PackedBatch": "collate",
        "SimulationReport": "simulator",
        "TinyCausalLM": "model",
        "assign_to_groups": "groups",
        "attention_balance_ratio": "metrics",
        "ave_token_loss": "loss",
        "balance_ranks": "batching",
        "best_settings": "groups",
        "block_diagonal_mask": "collate",
        "communication_ratio": "metrics",
        "greedy_fill": "packing",
        "mean_loss": "loss",
        "measured_epochs": "measured",
        "naive_pack": "packing",
        "pack_collate": "collate",
        "pack_stats": "cost",
        "padding_ratio": "metrics",
        "plan_steps": "measured",
        "rank_loads": "batching",
        "round_robin": "batching",
        "run_ddp_demo": "dist",
        "run_sp_demo": "sp",
        "select_groups": "groups",
        "simulate": "simulator",
        "sorted_pack": "packing",
        "sp_attention": "sp",
        "step_gradient": "dist",
        "synth_lengths": "data",
        "varlen_attention": "model",
    },
)

if TYPE_CHECKING:  # the names for static tools; at run time they load lazily
    from hbp.batching import balance_ranks, rank_loads, round_robin  # noqa: F401
    from hbp.collate import HBPBatchSampler, PackedBatch, block_diagonal_mask, pack_collate  # noqa: F401
    from hbp.cost import PRESET_8B_ASSUMPTIONS, CostModel, pack_stats  # noqa: F401
    from hbp.data import DEFAULT_MIX, synth_lengths  # noqa: F401
    from hbp.dist import run_ddp_demo, step_gradient  # noqa: F401
    from hbp.groups import (  # noqa: F401
        DEFAULT_CANDIDATES,
        GroupConfig,
        assign_to_groups,
        best_settings,
        select_groups,
    )
    from hbp.loss import ave_token_loss, mean_loss  # noqa: F401
    from hbp.measured import measured_epochs, plan_steps  # noqa: F401
    from hbp.metrics import attention_balance_ratio, communication_ratio, padding_ratio  # noqa: F401
    from hbp.model import TinyCausalLM, varlen_attention  # noqa: F401
    from hbp.packing import greedy_fill, naive_pack, sorted_pack  # noqa: F401
    from hbp.schedule import Batch, HBPScheduler  # noqa: F401
    from hbp.simulator import SimulationReport, simulate  # noqa: F401
    from hbp.sp import GatherSequence, run_sp_demo, sp_attention  # noqa: F401
