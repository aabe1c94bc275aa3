"""dictpfl: DictPFL, private federated learning on CKKS-encrypted gradients (Xue et al.,
NeurIPS 2025, arXiv 2510.21086).

DePE splits each pretrained weight into a frozen local dictionary D and a small trainable
lookup table T (``W = W_res + D T``); only table updates leave a client, always encrypted.
PrME prunes them further with a mask all clients derive from the public aggregation history.
The server adds ciphertexts and never holds a secret key.

Names are imported on first use (PEP 562), so the server process, which only needs
:mod:`dictpfl.server`, never imports torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "dictpfl.data": ("FederatedData", "dirichlet_split", "make_federated_digits"),
    "dictpfl.depe": (
        "DictLinear",
        "decompose_model",
        "flatten_tables",
        "lookup_parameters",
        "shared_numel",
        "unflatten_into",
    ),
    "dictpfl.federated": ("METHODS", "FLHistory", "Federation", "run_federated"),
    "dictpfl.he": ("HEContext",),
    "dictpfl.messages": ("Message", "decode", "encode", "manifest"),
    "dictpfl.model": ("MLP", "accuracy", "pretrained_mlp"),
    "dictpfl.prme": ("PrMEMask",),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

if TYPE_CHECKING:
    from dictpfl.data import FederatedData, dirichlet_split, make_federated_digits
    from dictpfl.depe import (
        DictLinear,
        decompose_model,
        flatten_tables,
        lookup_parameters,
        shared_numel,
        unflatten_into,
    )
    from dictpfl.federated import METHODS, Federation, FLHistory, run_federated
    from dictpfl.he import HEContext
    from dictpfl.messages import Message, decode, encode, manifest
    from dictpfl.model import MLP, accuracy, pretrained_mlp
    from dictpfl.prme import PrMEMask


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'dictpfl' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "METHODS",
    "MLP",
    "DictLinear",
    "FLHistory",
    "FederatedData",
    "Federation",
    "HEContext",
    "Message",
    "PrMEMask",
    "accuracy",
    "decode",
    "decompose_model",
    "dirichlet_split",
    "encode",
    "flatten_tables",
    "lookup_parameters",
    "make_federated_digits",
    "manifest",
    "pretrained_mlp",
    "run_federated",
    "shared_numel",
    "unflatten_into",
]
