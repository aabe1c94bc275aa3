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

from dartquant.calibrate import calibrate_rotation, normalize_acts, rotate_acts
from dartquant.cayley import CayleySGD
from dartquant.data import VOCAB, decode, encode, heavy_tailed_acts, synthetic_text, token_splits
from dartquant.fusion import (
    check_model,
    fuse_rotations,
    inject_channel_outliers,
    quantize_model,
    quantized_copy,
    rotated_state,
)
from dartquant.hadamard import fwht, hadamard, online_hadamard, random_hadamard, random_orthogonal
from dartquant.losses import whip_loss
from dartquant.model import TinyLlama, perplexity
from dartquant.pipeline import (
    METHODS,
    QuantResult,
    calibrate_rotations,
    collect_activations,
    pipeline,
)
from dartquant.qrorth import QROrth
from dartquant.quant import (
    QuantLinear,
    fake_quantize,
    gptq_quantize,
    quantize_act_per_token,
    quantize_weight_rtn,
)

__all__ = [
    "METHODS",
    "VOCAB",
    "CayleySGD",
    "QROrth",
    "QuantLinear",
    "QuantResult",
    "TinyLlama",
    "calibrate_rotation",
    "calibrate_rotations",
    "check_model",
    "collect_activations",
    "decode",
    "encode",
    "fake_quantize",
    "fuse_rotations",
    "fwht",
    "gptq_quantize",
    "heavy_tailed_acts",
    "hadamard",
    "inject_channel_outliers",
    "normalize_acts",
    "online_hadamard",
    "perplexity",
    "pipeline",
    "quantize_act_per_token",
    "quantize_model",
    "quantize_weight_rtn",
    "quantized_copy",
    "random_hadamard",
    "random_orthogonal",
    "rotate_acts",
    "rotated_state",
    "synthetic_text",
    "token_splits",
    "whip_loss",
]
