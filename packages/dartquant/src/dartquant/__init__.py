"""DartQuant: efficient rotational distribution calibration for LLM quantisation
(NeurIPS 2025, arXiv 2511.04063).

Rotations R (x ↦ x R, W ↦ W R) keep a transformer's function and spread outlier channels, so
4-bit activations work. DartQuant calibrates each rotation locally on cached activations with the
Whip loss sum_i exp(-|(x R)_i|) and parametrises R = Q(Z) by a QR factorisation (QR-Orth), so
plain SGD replaces Cayley / Riemannian optimisation.

>>> import torch
>>> from dartquant import hadamard, whip_loss
>>> x = torch.zeros(1, 16); x[0, 0] = 4.0
>>> bool(whip_loss(x @ hadamard(16)) < whip_loss(x))
True
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from dartquant.calibrate import calibrate_rotation as calibrate_rotation
    from dartquant.calibrate import normalize_acts as normalize_acts
    from dartquant.calibrate import rotate_acts as rotate_acts
    from dartquant.cayley import CayleySGD as CayleySGD
    from dartquant.checkpoint import load_quantized as load_quantized
    from dartquant.checkpoint import quantize_checkpoint as quantize_checkpoint
    from dartquant.checkpoint import read_token_file as read_token_file
    from dartquant.checkpoint import save_quantized as save_quantized
    from dartquant.data import VOCAB as VOCAB
    from dartquant.data import decode as decode
    from dartquant.data import encode as encode
    from dartquant.data import heavy_tailed_acts as heavy_tailed_acts
    from dartquant.data import synthetic_text as synthetic_text
    from dartquant.data import token_splits as token_splits
    from dartquant.fusion import fuse_rotations as fuse_rotations
    from dartquant.fusion import inject_channel_outliers as inject_channel_outliers
    from dartquant.fusion import quantize_model as quantize_model
    from dartquant.fusion import quantized_copy as quantized_copy
    from dartquant.fusion import rotated_state as rotated_state
    from dartquant.losses import whip_loss as whip_loss
    from dartquant.model import perplexity as perplexity
    from dartquant.model import set_kv_bits as set_kv_bits
    from dartquant.model import set_online_hadamard as set_online_hadamard
    from dartquant.model import tiny_llama as tiny_llama
    from dartquant.qrorth import QROrth as QROrth
    from dartquant.quant import QuantLinear as QuantLinear
    from dartquant.quant import fake_quantize as fake_quantize
    from dartquant.quant import gptq_quantize as gptq_quantize
    from dartquant.quant import quantize_act_per_token as quantize_act_per_token
    from dartquant.quant import quantize_weight_rtn as quantize_weight_rtn
    from dartquant.recipe import METHODS as METHODS
    from dartquant.recipe import QuantResult as QuantResult
    from dartquant.recipe import calibrate_rotations as calibrate_rotations
    from dartquant.recipe import collect_activations as collect_activations
    from dartquant.recipe import pipeline as pipeline
    from dartquant.rotations import fwht as fwht
    from dartquant.rotations import hadamard as hadamard
    from dartquant.rotations import online_hadamard as online_hadamard
    from dartquant.rotations import random_hadamard as random_hadamard
    from dartquant.rotations import random_orthogonal as random_orthogonal

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "CayleySGD": "cayley",
        "METHODS": "recipe",
        "QROrth": "qrorth",
        "QuantLinear": "quant",
        "QuantResult": "recipe",
        "VOCAB": "data",
        "calibrate_rotation": "calibrate",
        "calibrate_rotations": "recipe",
        "collect_activations": "recipe",
        "decode": "data",
        "encode": "data",
        "fake_quantize": "quant",
        "fuse_rotations": "fusion",
        "fwht": "rotations",
        "gptq_quantize": "quant",
        "hadamard": "rotations",
        "heavy_tailed_acts": "data",
        "inject_channel_outliers": "fusion",
        "load_quantized": "checkpoint",
        "normalize_acts": "calibrate",
        "online_hadamard": "rotations",
        "perplexity": "model",
        "pipeline": "recipe",
        "quantize_act_per_token": "quant",
        "quantize_checkpoint": "checkpoint",
        "quantize_model": "fusion",
        "quantize_weight_rtn": "quant",
        "quantized_copy": "fusion",
        "random_hadamard": "rotations",
        "random_orthogonal": "rotations",
        "read_token_file": "checkpoint",
        "rotate_acts": "calibrate",
        "rotated_state": "fusion",
        "save_quantized": "checkpoint",
        "set_kv_bits": "model",
        "set_online_hadamard": "model",
        "synthetic_text": "data",
        "tiny_llama": "model",
        "token_splits": "data",
        "whip_loss": "losses",
    },
)
