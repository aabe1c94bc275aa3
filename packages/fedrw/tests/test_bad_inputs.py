"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite, plus the out-of-range values listed in ``bad``): alpha < 0, K < 2,
an empty client dataset and pad_to smaller than a table among them (check 12)."""

from collections import Counter

import numpy as np
import torch

import fedrw
from fedrw import CharGRU, OPRFKey, canonicalize
from fedrw.curve import ORDER, lift
from paperkit.testing import BadInputs, Call, fresh

KEY = OPRFKey(12345)
QUERIES, STATE = fedrw.blind([b"a"], np.random.default_rng(0))
RESPONSES = [KEY.evaluate(q) for q in QUERIES]


def _off_curve() -> bytes:
    for i in range(256):
        x = bytes([i]) * 32
        try:
            lift(x)
        except ValueError:
            return x
    raise AssertionError("no x off the curve")  # pragma: no cover


OFF = _off_curve()
CORPUS = fedrw.make_duplicated_corpus(clients=2, dup_rate=0.3, n_chunks=20, seed=0)
_UNION = Counter(canonicalize(t) for d in CORPUS.clients for t in d)
_LOCAL = [Counter(canonicalize(t) for t in d) for d in CORPUS.clients]
COUNTS = [{x: tuple(c[x] for c in _LOCAL) for x in local} for local in _LOCAL]
DATASETS = [["a", "b", "b"], ["b", "c"]]
BAD_DATASETS = [[["a"]], [["a"], []], "abc", [["a"], [3]], [["a"], "b"]]
TOKENS = torch.tensor([[2, 3, 4], [5, 6, 7]])


def client_training_data(corpus, counts):
    """``client_training_data("fedrw", ...)``: the suite's Call reserves the keyword ``method``."""
    return fedrw.client_training_data("fedrw", corpus, counts)


def run_federated_lm(corpus, rounds, alpha, seed, **kwargs):
    """``run_federated_lm("none", ...)``: the suite's Call reserves the keyword ``method``."""
    return fedrw.run_federated_lm("none", corpus, rounds, alpha, seed, **kwargs)


def _rng():
    return fresh(lambda: np.random.default_rng(0))


SUITE = BadInputs(
    fedrw,
    [
        Call(
            fedrw.canonicalize,
            sample="a  b",
            bad={"sample": [3, b"\xff", None]},
            accepts={"sample": {"choice"}},  # any text is a sample
        ),
        Call(fedrw.hash_to_curve, item=b"x", bad={"item": ["text", 3]}),
        Call(
            OPRFKey,
            scalar=12345,
            method="evaluate",
            call={"point_x": QUERIES[0]},
            bad={"scalar": [0, ORDER, -1], "point_x": [b"short", OFF, 3]},
        ),
        Call(
            OPRFKey,
            name="OPRFKey.prf",
            scalar=7,
            method="prf",
            call={"item": b"x"},
            bad={"item": ["text", 3]},
        ),
        Call(OPRFKey.generate, name="OPRFKey.generate", rng=_rng(), bad={"rng": ["seed", 3]}),
        Call(
            fedrw.blind,
            items=[b"a", b"b"],
            rng=_rng(),
            bad={"items": ["abc", [1, 2], b"ab"], "rng": ["seed", 3]},
        ),
        Call(
            fedrw.unblind,
            responses=RESPONSES,
            state=STATE,
            bad={"responses": [[], [b"x" * 31], [OFF], "x"], "state": [None, 3]},
        ),
        Call(
            fedrw.build_label_table,
            key=KEY,
            counts={b"a": 2, b"b": 1},
            pad_to=4,
            rng=_rng(),
            bad={
                "key": [None, 3],
                "counts": [{b"a": 0}, {"a": 1}, [1], {b"a": 1.5}, {b"a": 2**32}],
                "pad_to": [0, 1],
                "rng": ["seed"],
            },
        ),
        Call(
            fedrw.lookup_labels,
            prf_values=[KEY.prf(b"a")],
            table=fresh(lambda: fedrw.build_label_table(KEY, {b"a": 2}, 2)),
            bad={"prf_values": ["abc", [3]], "table": [[(b"a",)], "x", [b"ab"]]},
        ),
        Call(fedrw.round_robin_schedule, k=4, bad={"k": [1, 0, 10**6]}),
        Call(fedrw.sequential_schedule, k=3, bad={"k": [1, 10**6]}),
        Call(
            fedrw.secure_global_frequencies,
            client_datasets=DATASETS,
            parallel=True,
            pad_to=4,
            seed=0,
            bad={"client_datasets": BAD_DATASETS, "pad_to": [1, 0, 10**15], "seed": [-1]},
        ),
        Call(
            fedrw.ttp_global_frequencies,
            client_datasets=DATASETS,
            bad={"client_datasets": BAD_DATASETS},
        ),
        Call(
            fedrw.reweight,
            freqs_per_sample=np.array([1, 2, 5]),
            alpha=0.5,
            bad={"alpha": [-0.1, 1.5], "freqs_per_sample": [np.array([0.5, 2.0]), "x"]},
            accepts={"freqs_per_sample": {"rank"}},  # any shape (documented)
        ),
        Call(
            fedrw.adaptive_alpha,
            round_index=2,
            alpha_max=1.0,
            warmup_rounds=3,
            bad={"round_index": [-1], "alpha_max": [-0.1, 2.0], "warmup_rounds": [-1]},
        ),
        Call(
            fedrw.global_dedup_keep,
            client=1,
            counts={b"a": (2, 1), b"b": (0, 3)},
            bad={"client": [-1, 2], "counts": [{b"a": (1, 0)}, "x"]},
        ),
        Call(
            fedrw.make_duplicated_corpus,
            clients=2,
            dup_rate=0.2,
            zipf=1.5,
            max_mult=50,
            chunk=200,
            seed=0,
            n_chunks=20,
            test_frac=0.1,
            bad={
                "clients": [1, 10**6],
                "dup_rate": [-0.1, 0.95],
                "zipf": [1.0, 0.5],
                "max_mult": [1],
                "chunk": [4, 10**9],
                "seed": [-1],
                "n_chunks": [1, 10**9],
                "test_frac": [0.5, -0.1],
            },
        ),
        Call(
            fedrw.pydoc_chunks,
            chunk=200,
            n_chunks=10,
            bad={"chunk": [0, 10**9], "n_chunks": [0, 10**6]},
        ),
        Call(
            fedrw.encode_texts,
            texts=["ab", "c"],
            length=4,
            bad={"texts": ["abc", [1]], "length": [0, 10**9]},
        ),
        Call(
            client_training_data,
            corpus=CORPUS,
            counts=COUNTS,
            bad={"corpus": ["x", None], "counts": [None, COUNTS[:1], [{}, {}]]},
        ),
        Call(
            run_federated_lm,
            corpus=CORPUS,
            rounds=1,
            alpha=1.0,
            seed=0,
            warmup_rounds=0,
            emb=4,
            hidden=4,
            lr=1e-3,
            batch=8,
            bad={
                "corpus": ["x", fedrw.FederatedCorpus([["a"], ["b"]], [])],
                "rounds": [0, 10**6],
                "alpha": [-0.1, 1.5],
                "seed": [-1],
                "warmup_rounds": [-1],
                "emb": [0],
                "hidden": [0, 10**6],
                "lr": [0.0, -1.0],
                "batch": [0],
            },
        ),
        Call(
            CharGRU,
            emb=4,
            hidden=4,
            vocab=102,
            call={"tokens": TOKENS},
            shapes={"tokens": "B L"},
            bad={"emb": [0], "hidden": [0, 10**6], "vocab": [1], "tokens": [TOKENS + 200]},
        ),
        Call(
            fedrw.weighted_lm_loss,
            logits=torch.randn(2, 3, 5),
            targets=torch.tensor([[1, 2, 0], [3, 4, 4]]),
            weights=torch.tensor([0.5, 1.0]),
            pad_id=0,
            shapes={"logits": "B L V", "targets": "B L", "weights": "B"},
            bad={
                "targets": [torch.tensor([[1, 2, 9], [3, 4, 4]])],
                "weights": [torch.tensor([-1.0, 1.0]), torch.zeros(2)],
                "pad_id": [-1, 5],
            },
        ),
    ],
    exempt={
        "BlindState": "the querier's state record returned by blind; unblind checks its type",
        "FederatedCorpus": "a plain record built by make_duplicated_corpus; consumers check it",
        "FrequencyResult": "the record secure_global_frequencies returns",
        "LMHistory": "the record run_federated_lm returns",
        "Message": "a transcript record",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
