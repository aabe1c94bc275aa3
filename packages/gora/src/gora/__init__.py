"""GoRA: gradient-driven adaptive low-rank adaptation (NeurIPS 2025, arXiv 2502.12171).

Names are exported lazily (:func:`paperkit.lazy.lazy_exports`): ``import gora`` loads neither
torch nor peft until a name is used.

>>> from gora import allocate_ranks
>>> allocate_ranks({"a": 3.0, "b": 1.0}, {"a": (8, 8), "b": (8, 8)}, base_rank=4, r_min=1)
{'a': 6, 'b': 2}
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "IMPORTANCE_KINDS": "allocation",
        "allocate_ranks": "allocation",
        "importance_scores": "allocation",
        "lora_budget": "allocation",
        "collect_gradients": "gradients",
        "find_targets": "gradients",
        "init_factors": "initialization",
        "kaiming_a": "initialization",
        "lora_scaling": "initialization",
        "GoRALinear": "layers",
        "TARGETS": "model",
        "DigitsEncoder": "model",
        "load_factors_into_peft": "peft_interop",
        "peft_lora_layers": "peft_interop",
        "to_peft_config": "peft_interop",
        "GoRAPlan": "pipeline",
        "apply_gora": "pipeline",
        "apply_plan": "pipeline",
        "plan_gora": "pipeline",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from gora.allocation import IMPORTANCE_KINDS as IMPORTANCE_KINDS
    from gora.allocation import allocate_ranks as allocate_ranks
    from gora.allocation import importance_scores as importance_scores
    from gora.allocation import lora_budget as lora_budget
    from gora.gradients import collect_gradients as collect_gradients
    from gora.gradients import find_targets as find_targets
    from gora.initialization import init_factors as init_factors
    from gora.initialization import kaiming_a as kaiming_a
    from gora.initialization import lora_scaling as lora_scaling
    from gora.layers import GoRALinear as GoRALinear
    from gora.model import TARGETS as TARGETS
    from gora.model import DigitsEncoder as DigitsEncoder
    from gora.peft_interop import load_factors_into_peft as load_factors_into_peft
    from gora.peft_interop import peft_lora_layers as peft_lora_layers
    from gora.peft_interop import to_peft_config as to_peft_config
    from gora.pipeline import GoRAPlan as GoRAPlan
    from gora.pipeline import apply_gora as apply_gora
    from gora.pipeline import apply_plan as apply_plan
    from gora.pipeline import plan_gora as plan_gora
