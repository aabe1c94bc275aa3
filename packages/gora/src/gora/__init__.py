"""GoRA: gradient-driven adaptive low-rank adaptation (NeurIPS 2025, arXiv 2502.12171)."""

from gora.allocation import IMPORTANCE_KINDS, allocate_ranks, importance_scores, lora_budget
from gora.gradients import collect_gradients, find_targets
from gora.initialization import init_factors, kaiming_a, lora_scaling
from gora.layers import GoRALinear
from gora.model import TARGETS, DigitsEncoder
from gora.peft_interop import load_factors_into_peft, peft_lora_layers, to_peft_config
from gora.pipeline import GoRAPlan, apply_gora, apply_plan, plan_gora

__all__ = [
    "IMPORTANCE_KINDS",
    "TARGETS",
    "DigitsEncoder",
    "GoRALinear",
    "GoRAPlan",
    "allocate_ranks",
    "apply_gora",
    "apply_plan",
    "collect_gradients",
    "find_targets",
    "importance_scores",
    "init_factors",
    "kaiming_a",
    "load_factors_into_peft",
    "lora_budget",
    "lora_scaling",
    "peft_lora_layers",
    "plan_gora",
    "to_peft_config",
]
