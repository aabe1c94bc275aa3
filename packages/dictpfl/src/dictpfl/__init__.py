"""dictpfl: DictPFL, private federated learning on CKKS-encrypted gradients (Xue et al.,
NeurIPS 2025, arXiv 2510.21086).

DePE splits each pretrained weight into a frozen local dictionary D and a small trainable
lookup table T (``W = W_res + D T``); only table updates leave a client, always encrypted.
PrME prunes them further with a mask all clients derive from the public aggregation history.
The server adds ciphertexts and never holds a secret key.

Names are imported on first use, so the ``dictpfl`` command never imports torch or Flower.
The federated runs go through Flower: :mod:`dictpfl.serverapp` (the strategy, public key only)
and :mod:`dictpfl.clientapp` (the clients, with the secret key).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "FederatedData": "data",
        "dirichlet_split": "data",
        "make_federated_digits": "data",
        "DictLinear": "depe",
        "decompose_model": "depe",
        "flatten_tables": "depe",
        "lookup_parameters": "depe",
        "shared_numel": "depe",
        "unflatten_into": "depe",
        "ClientSetup": "config",
        "JobConfig": "config",
        "ENGINES": "federated",
        "FLHistory": "federated",
        "InProcessGrid": "federated",
        "METHODS": "federated",
        "run_federated": "federated",
        "run_methods": "federated",
        "HEContext": "he",
        "EncryptedFedAvg": "serverapp",
        "ServerLog": "serverapp",
        "manifest": "wire",
        "message_bytes": "wire",
        "MLP": "model",
        "accuracy": "model",
        "pretrained_mlp": "model",
        "PrMEMask": "prme",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from dictpfl.config import ClientSetup as ClientSetup
    from dictpfl.config import JobConfig as JobConfig
    from dictpfl.data import FederatedData as FederatedData
    from dictpfl.data import dirichlet_split as dirichlet_split
    from dictpfl.data import make_federated_digits as make_federated_digits
    from dictpfl.depe import DictLinear as DictLinear
    from dictpfl.depe import decompose_model as decompose_model
    from dictpfl.depe import flatten_tables as flatten_tables
    from dictpfl.depe import lookup_parameters as lookup_parameters
    from dictpfl.depe import shared_numel as shared_numel
    from dictpfl.depe import unflatten_into as unflatten_into
    from dictpfl.federated import ENGINES as ENGINES
    from dictpfl.federated import METHODS as METHODS
    from dictpfl.federated import FLHistory as FLHistory
    from dictpfl.federated import InProcessGrid as InProcessGrid
    from dictpfl.federated import run_federated as run_federated
    from dictpfl.federated import run_methods as run_methods
    from dictpfl.he import HEContext as HEContext
    from dictpfl.model import MLP as MLP
    from dictpfl.model import accuracy as accuracy
    from dictpfl.model import pretrained_mlp as pretrained_mlp
    from dictpfl.prme import PrMEMask as PrMEMask
    from dictpfl.serverapp import EncryptedFedAvg as EncryptedFedAvg
    from dictpfl.serverapp import ServerLog as ServerLog
    from dictpfl.wire import manifest as manifest
    from dictpfl.wire import message_bytes as message_bytes
