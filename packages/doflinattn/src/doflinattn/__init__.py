"""doflinattn: degrees of freedom for linear attention (NeurIPS 2025, arXiv 2507.03340).

Per-layer feature dimensions for distilling softmax attention into linear attention, chosen from
the statistical degrees of freedom of each layer's attention kernel, learned feature maps trained
layer by layer, and a Triton kernel for the causal path. The public names are imported on first
use (importing ``doflinattn`` imports no torch).

>>> import torch
>>> from doflinattn import allocate_dims
>>> dims, lam = allocate_dims([torch.full((8,), 0.125), torch.tensor([0.9, 0.1] + [0.0] * 6)], 8)
>>> dims
[6, 2]
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "HedgehogFeatureMap": "features",
        "LayerCache": "distill",
        "LinearAttention": "attention",
        "MLPFeatureMap": "features",
        "MiniLMTeacher": "teachers",
        "TinySoftmaxEncoder": "teachers",
        "allocate_dims": "dof",
        "degrees_of_freedom": "dof",
        "end_to_end_tune": "teachers",
        "kernel_gram": "dof",
        "layer_dof": "dof",
        "layer_spectra": "dof",
        "layerwise_distill": "distill",
        "periodic_tokens": "data",
        "relative_output_error": "distill",
        "spectral_keys": "data",
        "stdlib_sentences": "data",
        "uniform_dims": "dof",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from doflinattn.attention import LinearAttention as LinearAttention
    from doflinattn.data import periodic_tokens as periodic_tokens
    from doflinattn.data import spectral_keys as spectral_keys
    from doflinattn.data import stdlib_sentences as stdlib_sentences
    from doflinattn.distill import LayerCache as LayerCache
    from doflinattn.distill import layerwise_distill as layerwise_distill
    from doflinattn.distill import relative_output_error as relative_output_error
    from doflinattn.dof import allocate_dims as allocate_dims
    from doflinattn.dof import degrees_of_freedom as degrees_of_freedom
    from doflinattn.dof import kernel_gram as kernel_gram
    from doflinattn.dof import layer_dof as layer_dof
    from doflinattn.dof import layer_spectra as layer_spectra
    from doflinattn.dof import uniform_dims as uniform_dims
    from doflinattn.features import HedgehogFeatureMap as HedgehogFeatureMap
    from doflinattn.features import MLPFeatureMap as MLPFeatureMap
    from doflinattn.teachers import MiniLMTeacher as MiniLMTeacher
    from doflinattn.teachers import TinySoftmaxEncoder as TinySoftmaxEncoder
    from doflinattn.teachers import end_to_end_tune as end_to_end_tune
