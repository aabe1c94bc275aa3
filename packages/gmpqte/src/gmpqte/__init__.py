"""GMPQ-TE: efficient and generalizable mixed-precision quantization via topological entropy
(NeurIPS 2025).

Each quantisable layer's sensitivity is scored by its topological entropy (TE): persistent
homology (cubical complexes on the superlevel filtration of its feature maps, or Vietoris-Rips on
the minibatch's feature vectors) of one minibatch of same-label images, summarised by persistent
or Betti-curve entropy. One integer linear program then gives more bits to higher-TE layers under
a model-size (and BitOps) budget.

>>> import torch
>>> from gmpqte import GMPQTE, small_cnn
>>> torch.manual_seed(0) and None
>>> est = GMPQTE(max_channels=4).fit(small_cnn(), torch.rand(8, 1, 16, 16))
>>> policy = est.policy(budget_bits=3 * sum(est.n_params_.values()))
>>> sorted(policy)
['conv1', 'conv2', 'conv3', 'conv4', 'fc']

The public names are imported on first use (importing ``gmpqte`` imports no torch).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "DEFAULT_BITS": "allocation",
        "GMPQTE": "estimator",
        "LayerTE": "entropy",
        "QuantLayer": "quantize",
        "SmallCNN": "models",
        "accuracy": "training",
        "betti_curve": "topology",
        "betti_entropy": "topology",
        "cubical_diagrams": "topology",
        "digits16": "data",
        "fold_batchnorm": "models",
        "hawq_policy": "baselines",
        "hawq_trace_sensitivity": "baselines",
        "layer_te_details": "entropy",
        "layer_topological_entropy": "entropy",
        "measured_sensitivity": "baselines",
        "persistent_entropy": "topology",
        "policy_bits": "allocation",
        "quantisable_layers": "entropy",
        "quantize_activation": "quantize",
        "quantize_model": "quantize",
        "quantize_weight": "quantize",
        "random_policy": "baselines",
        "rips_diagrams": "topology",
        "same_label_batch": "data",
        "shapes8x8": "data",
        "small_cnn": "models",
        "solve_bit_allocation": "allocation",
        "train_classifier": "training",
        "uniform_policy": "baselines",
        "upsample": "data",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from gmpqte.allocation import DEFAULT_BITS as DEFAULT_BITS
    from gmpqte.allocation import policy_bits as policy_bits
    from gmpqte.allocation import solve_bit_allocation as solve_bit_allocation
    from gmpqte.baselines import hawq_policy as hawq_policy
    from gmpqte.baselines import hawq_trace_sensitivity as hawq_trace_sensitivity
    from gmpqte.baselines import measured_sensitivity as measured_sensitivity
    from gmpqte.baselines import random_policy as random_policy
    from gmpqte.baselines import uniform_policy as uniform_policy
    from gmpqte.data import digits16 as digits16
    from gmpqte.data import same_label_batch as same_label_batch
    from gmpqte.data import shapes8x8 as shapes8x8
    from gmpqte.data import upsample as upsample
    from gmpqte.entropy import LayerTE as LayerTE
    from gmpqte.entropy import layer_te_details as layer_te_details
    from gmpqte.entropy import layer_topological_entropy as layer_topological_entropy
    from gmpqte.entropy import quantisable_layers as quantisable_layers
    from gmpqte.estimator import GMPQTE as GMPQTE
    from gmpqte.models import SmallCNN as SmallCNN
    from gmpqte.models import fold_batchnorm as fold_batchnorm
    from gmpqte.models import small_cnn as small_cnn
    from gmpqte.quantize import QuantLayer as QuantLayer
    from gmpqte.quantize import quantize_activation as quantize_activation
    from gmpqte.quantize import quantize_model as quantize_model
    from gmpqte.quantize import quantize_weight as quantize_weight
    from gmpqte.topology import betti_curve as betti_curve
    from gmpqte.topology import betti_entropy as betti_entropy
    from gmpqte.topology import cubical_diagrams as cubical_diagrams
    from gmpqte.topology import persistent_entropy as persistent_entropy
    from gmpqte.topology import rips_diagrams as rips_diagrams
    from gmpqte.training import accuracy as accuracy
    from gmpqte.training import train_classifier as train_classifier
