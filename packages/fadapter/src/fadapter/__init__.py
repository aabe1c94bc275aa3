"""F-Adapter: frequency-adaptive parameter-efficient fine-tuning of neural operators
(NeurIPS 2025, arXiv 2509.23173).

The public names are imported on first use (importing ``fadapter`` imports no torch).

>>> from fadapter import band_dims
>>> band_dims(32)  # adapter widths of the 4 bands of 32 modes, adapter_dim 32
[52, 34, 22, 16]
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "AFNO2d": "layers",
        "AdapterAFNO2d": "adapters",
        "FAdapterAFNO2d": "adapters",
        "LoRAAFNO2d": "lora",
        "LoRALinear": "lora",
        "OperatorNet": "layers",
        "adapter_width_probe": "theory",
        "apply_peft": "peft",
        "band_dims": "bands",
        "band_errors": "metrics",
        "band_index": "bands",
        "count_trainable": "peft",
        "l2re": "metrics",
        "lora_depth_probe": "theory",
        "navier_stokes_2d": "ns",
        "ns_solve": "ns",
        "velocity": "ns",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from fadapter.adapters import AdapterAFNO2d as AdapterAFNO2d
    from fadapter.adapters import FAdapterAFNO2d as FAdapterAFNO2d
    from fadapter.bands import band_dims as band_dims
    from fadapter.bands import band_index as band_index
    from fadapter.layers import AFNO2d as AFNO2d
    from fadapter.layers import OperatorNet as OperatorNet
    from fadapter.lora import LoRAAFNO2d as LoRAAFNO2d
    from fadapter.lora import LoRALinear as LoRALinear
    from fadapter.metrics import band_errors as band_errors
    from fadapter.metrics import l2re as l2re
    from fadapter.ns import navier_stokes_2d as navier_stokes_2d
    from fadapter.ns import ns_solve as ns_solve
    from fadapter.ns import velocity as velocity
    from fadapter.peft import apply_peft as apply_peft
    from fadapter.peft import count_trainable as count_trainable
    from fadapter.theory import adapter_width_probe as adapter_width_probe
    from fadapter.theory import lora_depth_probe as lora_depth_probe
