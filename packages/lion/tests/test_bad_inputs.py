"""Every public entry point against the shared bad-input suite (paperkit.testing.BadInputs)."""

import torch

import lion
from lion import (
    CausalLinearAttention,
    CausalLinearViT,
    LionAttention,
    LionViT,
    SequenceTagger,
    SoftmaxAttention,
    SoftmaxViT,
    feature_map,
    lion_attention,
    lion_mask,
    snake_orders,
)
from paperkit.testing import BadInputs, Call

g = torch.Generator().manual_seed(0)
Q, K = (torch.rand(1, 2, 6, 4, generator=g) for _ in range(2))
V = torch.randn(1, 2, 6, 4, generator=g)
LL = torch.nn.functional.logsigmoid(torch.randn(1, 2, 6, generator=g))
X = torch.randn(2, 5, 16, generator=g)
IMAGES = torch.rand(2, 1, 8, 8, generator=g)
TOKENS = torch.randint(5, (2, 6), generator=g)
VIT = dict(img_size=8, patch_size=2, in_chans=1, num_classes=3, dim=16, depth=1, heads=2)
VIT_BAD = {"patch_size": [3], "heads": [3], "images": [IMAGES.double()]}
LAYER_BAD = {"dim": [0, 18], "num_heads": [0], "x": [X.double(), X[..., :8]]}

SUITE = BadInputs(
    lion,
    [
        Call(
            lion_attention,
            q=Q,
            k=K,
            v=V,
            log_lambda=LL,
            backend="chunk",
            chunk_size=4,
            eps=1e-6,
            shapes={"q": "B H N d", "k": "B H N d", "v": "B H N d", "log_lambda": "B H N"},
            bad={
                "backend": ["triton"],  # head size 4: Triton cannot tile it
                "chunk_size": [0],
                "eps": [-1.0],
                "log_lambda": [LL.abs() + 0.1],  # lambda > 1
            },
        ),
        Call(
            LionAttention,
            dim=16,
            num_heads=4,
            decay="s",
            backend="chunk",
            chunk_size=4,
            qkv_bias=True,
            eps=1e-6,
            order="raster",
            call={"x": X},
            shapes={"x": "B N 16"},
            bad={**LAYER_BAD, "chunk_size": [0], "eps": [-1.0], "backend": ["triton"]},
        ),
        Call(
            LionAttention,
            name="LionAttention-snake",
            dim=16,
            num_heads=4,
            decay="d",
            order="snake",
            grid=(2, 2),
            call={"x": X[:, :4]},
            shapes={"x": "B N 16"},
            bad={"grid": [(0, 2), (2,)], "x": [X[:, :3]]},  # 3 tokens do not fit a 2 x 2 grid
        ),
        # both act on the last axis and take any leading axes, by design
        Call(feature_map, x=X, decay="lit", accepts={"x": {"rank"}}),
        Call(
            lion_mask,
            log_lambda=LL,
            bad={"log_lambda": [LL.abs() + 0.1]},
            accepts={"log_lambda": {"rank"}},
        ),
        Call(snake_orders, h=2, w=3, prefix=1, bad={"h": [0], "prefix": [-1]}),
        Call(
            SoftmaxAttention,
            dim=16,
            num_heads=4,
            qkv_bias=False,
            call={"x": X},
            shapes={"x": "B N 16"},
            bad=LAYER_BAD,
        ),
        Call(
            CausalLinearAttention,
            dim=16,
            num_heads=4,
            decay="s",
            qkv_bias=True,
            eps=1e-6,
            call={"x": X},
            shapes={"x": "B N 16"},
            bad=LAYER_BAD,
        ),
        Call(
            LionViT,
            **VIT,
            decay="s",
            order="snake",
            pool="cls",
            backend="chunk",
            chunk_size=4,
            call={"images": IMAGES},
            shapes={"images": "B 1 8 8"},
            bad=VIT_BAD,
        ),
        Call(
            SoftmaxViT,
            **VIT,
            pool="mean",
            call={"images": IMAGES},
            shapes={"images": "B 1 8 8"},
            bad=VIT_BAD,
        ),
        Call(
            CausalLinearViT,
            **VIT,
            decay="d",
            pool="mean",
            call={"images": IMAGES},
            shapes={"images": "B 1 8 8"},
            bad=VIT_BAD,
        ),
        Call(
            SequenceTagger,
            vocab=5,
            num_classes=3,
            max_len=8,
            dim=16,
            depth=1,
            heads=2,
            attention="lion",
            decay="s",
            call={"tokens": TOKENS},
            # ids >= vocab, a sequence longer than max_len
            bad={"tokens": [TOKENS + 5, torch.zeros(1, 9, dtype=torch.long)], "heads": [3]},
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
