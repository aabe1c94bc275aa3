"""FedRW: privacy-preserving soft deduplication for federated LM training (arXiv 2511.07505,
NeurIPS 2025).

Clients compute each sample's global frequency F(x) = Σ_k c_k(x) by pairwise labelled private set
intersection (P-256 OPRF + AES-GCM label tables, no trusted party), scheduled round-robin so the
pairs of a round run in parallel, and then down-weight samples in the training loss with
w(x) = F(x)^(-α) instead of deleting duplicates.

>>> from fedrw import secure_global_frequencies, reweight
>>> res = secure_global_frequencies([["x", "y", "y"], ["y", "z"]])
>>> res.freqs[0] == {b"x": 1, b"y": 3}
True

The public names are imported on first use (importing ``fedrw`` imports neither torch nor
cryptography).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "BlindState": "oprf",
        "CharGRU": "model",
        "FederatedCorpus": "data",
        "FrequencyResult": "protocol",
        "LMHistory": "federated",
        "METHODS": "federated",
        "Message": "protocol",
        "OPRFKey": "oprf",
        "adaptive_alpha": "weights",
        "blind": "oprf",
        "build_label_table": "labels",
        "canonicalize": "canon",
        "client_training_data": "federated",
        "encode_texts": "model",
        "global_dedup_keep": "weights",
        "hash_to_curve": "curve",
        "lookup_labels": "labels",
        "make_duplicated_corpus": "data",
        "pydoc_chunks": "data",
        "reweight": "weights",
        "round_robin_schedule": "schedule",
        "run_federated_lm": "federated",
        "secure_global_frequencies": "protocol",
        "sequential_schedule": "schedule",
        "ttp_global_frequencies": "ttp",
        "unblind": "oprf",
        "weighted_lm_loss": "model",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from fedrw.canon import canonicalize as canonicalize
    from fedrw.curve import hash_to_curve as hash_to_curve
    from fedrw.data import FederatedCorpus as FederatedCorpus
    from fedrw.data import make_duplicated_corpus as make_duplicated_corpus
    from fedrw.data import pydoc_chunks as pydoc_chunks
    from fedrw.federated import METHODS as METHODS
    from fedrw.federated import LMHistory as LMHistory
    from fedrw.federated import client_training_data as client_training_data
    from fedrw.federated import run_federated_lm as run_federated_lm
    from fedrw.labels import build_label_table as build_label_table
    from fedrw.labels import lookup_labels as lookup_labels
    from fedrw.model import CharGRU as CharGRU
    from fedrw.model import encode_texts as encode_texts
    from fedrw.model import weighted_lm_loss as weighted_lm_loss
    from fedrw.oprf import BlindState as BlindState
    from fedrw.oprf import OPRFKey as OPRFKey
    from fedrw.oprf import blind as blind
    from fedrw.oprf import unblind as unblind
    from fedrw.protocol import FrequencyResult as FrequencyResult
    from fedrw.protocol import Message as Message
    from fedrw.protocol import secure_global_frequencies as secure_global_frequencies
    from fedrw.schedule import round_robin_schedule as round_robin_schedule
    from fedrw.schedule import sequential_schedule as sequential_schedule
    from fedrw.ttp import ttp_global_frequencies as ttp_global_frequencies
    from fedrw.weights import adaptive_alpha as adaptive_alpha
    from fedrw.weights import global_dedup_keep as global_dedup_keep
    from fedrw.weights import reweight as reweight
