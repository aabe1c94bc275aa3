"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range and resource-sized values listed in ``bad``)."""

import torch

import flashbias
from paperkit.testing import BadInputs, Call

B, N, M, H, d, R = 2, 6, 5, 2, 4, 3


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


q, k, v = _rand(B, N, H, d, seed=1), _rand(B, M, H, d, seed=2), _rand(B, M, H, d, seed=3)
q_b, k_b = _rand(B, N, H, R, seed=4), _rand(B, M, H, R, seed=5)
mask = _rand(N, M, seed=6)
mask[0, 1] = -torch.inf  # masking a key is what -inf is for
pos = torch.rand(B, N, 3, generator=torch.Generator().manual_seed(7))
x = _rand(B, N, 8, seed=8)
ATTENTION = {"q": "B N H d", "k": "B M H d", "v": "B M H d"}
BIG = 10**12  # a size whose output would need terabytes
# (sizes set by tensor inputs are refused in test_attention.py / test_decompose.py under a small
# PAPERKIT_MAX_BYTES: the suite copies its bad values, so they cannot be huge expanded views)

SUITE = BadInputs(
    flashbias,
    [
        Call(
            flashbias.flash_bias_attention,
            q=q,
            k=k,
            v=v,
            q_bias=q_b,
            k_bias=k_b,
            attn_mask=mask,
            causal=True,
            softmax_scale=0.3,
            backend="sdpa",
            shapes={**ATTENTION, "q_bias": "B N H R", "k_bias": "B M H R", "attn_mask": "N M"},
            bad={"softmax_scale": [0.0, -1.0], "q_bias": [q_b[:1, :-1]]},
            # a mask broadcasts to (B, H, N, M) from any rank up to 4 (documented)
            accepts={"attn_mask": {"rank"}},
        ),
        Call(
            flashbias.dense_bias_attention,
            q=q,
            k=k,
            v=v,
            bias=_rand(B, H, N, M, seed=9),
            causal=False,
            softmax_scale=0.5,
            shapes={**ATTENTION, "bias": "B H N M"},
            bad={"softmax_scale": [0.0, -2.0]},
        ),
        Call(flashbias.alibi_slopes, H=4, bad={"H": [0, BIG]}),
        Call(flashbias.alibi_bias, N=5, H=2, causal=False, bad={"N": [0, 10**7], "H": [0]}),
        Call(
            flashbias.alibi_factors, N=5, H=2, causal=True, bad={"N": [0, BIG], "causal": [False]}
        ),
        Call(
            flashbias.distance_factors,
            x=pos,
            y=pos[:, :M],
            weight=torch.tensor([0.5, 1.0]),
            drop_row_constant=False,
            shapes={"x": "B N c", "y": "B M c", "weight": "H"},
        ),
        Call(
            flashbias.factors_to_dense,
            q_b=q_b,
            k_b=k_b,
            shapes={"q_b": "B N H R", "k_b": "B M H R"},
        ),
        Call(
            flashbias.svd_factors,
            bias=_rand(H, N, M, seed=10),
            rank=2,
            energy=0.9,
            shapes={"bias": "H N M"},
            bad={"rank": [0, M + 1], "energy": [0.0, 1.5]},
        ),
        Call(
            flashbias.NeuralFactorizer,
            in_q=3,
            in_k=4,
            heads=2,
            rank=2,
            hidden=8,
            call={"f_q": _rand(B, N, 3, seed=11), "f_k": _rand(B, M, 4, seed=12)},
            shapes={"f_q": "B N 3", "f_k": "B M 4"},
            bad={"hidden": [0, 10**7], "heads": [0, BIG], "rank": [0], "in_q": [0]},
        ),
        Call(
            flashbias.BiasedAttention,
            dim=8,
            heads=2,
            bias_kind="alibi",
            rank=4,
            backend="sdpa",
            call={"x": x},
            shapes={"x": "B N 8"},
            bad={"dim": [0, 7, 10**6], "heads": [0], "rank": [0]},
        ),
        Call(
            flashbias.BiasedAttention,
            name="BiasedAttention-distance",
            dim=8,
            heads=2,
            bias_kind="distance",
            call={"x": x, "coords": pos},
            shapes={"x": "B N 8", "coords": "B N c"},
        ),
        Call(
            flashbias.BiasedAttention,
            name="BiasedAttention-neural",
            dim=8,
            heads=2,
            bias_kind="neural",
            rank=2,
            call={"x": x, "features": _rand(B, N, 8, seed=13)},
            shapes={"x": "B N 8", "features": "B N 8"},
        ),
        Call(
            flashbias.BiasedAttention,
            name="BiasedAttention.set_static_bias",
            dim=8,
            heads=2,
            bias_kind="svd",
            rank=3,
            method="set_static_bias",
            # contiguous: the suite writes its NaN through reshape(-1), a copy for a permuted view
            call={"bias": flashbias.swin_cpb_bias(3, 2).contiguous(), "energy": 0.99},
            shapes={"bias": "2 P P"},
            bad={"energy": [0.0, 1.5]},
        ),
        Call(
            flashbias.swin_cpb_bias,
            window=3,
            heads=2,
            seed=0,
            hidden=16,
            bad={"window": [0, 10**4], "heads": [0], "seed": [-1], "hidden": [0, 10**9]},
        ),
        Call(
            flashbias.pair_bias,
            n=5,
            c_z=4,
            heads=2,
            seed=0,
            c_s=3,
            bad={"n": [0, 10**6], "c_z": [0], "heads": [0], "seed": [-1], "c_s": [0]},
        ),
        Call(
            flashbias.hbm_accesses,
            N=64,
            M=64,
            d=32,
            R=2,
            sram_bytes=1024,
            dense_bias=False,
            elem_bytes=2,
            bad={"N": [0], "R": [-1], "sram_bytes": [0], "elem_bytes": [0]},
        ),
    ],
    exempt={"PairBias": "a NamedTuple record of pair_bias's outputs; it computes nothing"},
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
