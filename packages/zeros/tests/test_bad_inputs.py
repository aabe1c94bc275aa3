"""Every public entry point with one valid call; the shared suite derives the bad ones."""

import torch

import zeros
from paperkit.testing import BadInputs, Call


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(len(shape)))


GATES = {"s": "B T H", "gate1": "B T H", "gateh": "B T H", "gate0": "B T H"}
Q, K, V = (_randn(1, 5, 2, 16) for _ in range(3))
S, G1, GH, G0 = (torch.rand(1, 5, 2) for _ in range(4))
LAYER = {"dim": 16, "num_heads": 2, "causal": True, "max_seq_len": 8, "bias": True}
LAYER_BAD = {
    "dim": [0, 10**6],  # 10**6: 20 TB of weights
    "num_heads": [0, 3, 32],  # 3 does not divide 16, 32 > dim
    "max_seq_len": [0, 10**13],  # 10**13: the RoPE tables would not fit
    "dropout": [-0.1, 1.0],
}
X = {"x": _randn(1, 5, 16)}
X_BAD = {"x": [_randn(1, 9, 16)]}  # longer than max_seq_len

SUITE = BadInputs(
    zeros,
    [
        Call(
            zeros.zeros_attention,
            q=Q,
            k=K,
            v=V,
            s=S,
            gate1=G1,
            gateh=GH,
            gate0=G0,
            causal=True,
            backend="chunk",
            chunk_size=2,
            shapes={"q": "B T H d", "k": "B T H d", "v": "B T H e", **GATES},
            bad={"chunk_size": [0, -2]},
        ),
        Call(zeros.zero_sum_weights, s=S, gate1=G1, gateh=GH, gate0=G0, causal=False, shapes=GATES),
        Call(
            zeros.ZeroSAttention,
            **LAYER,
            rope=True,
            use_norm=True,
            first_layer=True,
            logit_type="deviation",
            dropout=0.0,
            backend="chunk",
            chunk_size=4,
            terms="both",
            call=X,
            shapes={"x": "B T 16"},
            bad={**LAYER_BAD, "chunk_size": [0], **X_BAD},
        ),
        Call(
            zeros.SoftmaxAttention,
            **LAYER,
            rope=True,
            dropout=0.0,
            call=X,
            shapes={"x": "B T 16"},
            bad={**LAYER_BAD, **X_BAD},
        ),
        Call(
            zeros.LinearAttention,
            **LAYER,
            feature_map="relu",
            dropout=0.0,
            eps=1e-6,
            call=X,
            shapes={"x": "B T 16"},
            bad={**{k: v for k, v in LAYER_BAD.items() if k != "max_seq_len"}, "eps": [0.0, -1.0]},
        ),
        Call(
            zeros.TinyLM,
            vocab=10,
            dim=16,
            depth=1,
            heads=2,
            attn="zeros",
            max_seq_len=8,
            zero_order="first",
            call={"tokens": torch.tensor([[1, 2, 3]])},
            shapes={"tokens": "B T"},
            bad={
                "vocab": [0, 10**13],
                "dim": [0, 10**6],
                "depth": [0, 10**9],
                "heads": [0, 3],
                "max_seq_len": [0],
                "tokens": [torch.tensor([[1, 10, 3]]), torch.zeros(1, 9, dtype=torch.int64)],
            },
        ),
        Call(
            zeros.mqar,
            n=2,
            seq_len=8,
            num_kv=2,
            vocab=8,
            seed=0,
            bad={
                "n": [0, 10**13],
                "seq_len": [5, 10**13],  # 5 < 3 num_kv
                "num_kv": [0],
                "vocab": [4, 10**13],  # 4: too few keys for 2 distinct ones
                "seed": [-1],
            },
        ),
        Call(
            zeros.contrast,
            n=2,
            seq_len=4,
            value_dim=2,
            seed=0,
            bad={"n": [0, 10**13], "seq_len": [1, 10**13], "value_dim": [0, 10**13], "seed": [-1]},
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
