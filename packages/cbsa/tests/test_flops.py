"""FLOP counts: torch's counter agrees exactly with the closed forms; CBSA is linear in N at fixed
m (second differences vanish), MSSA quadratic."""

import pytest
import torch

from cbsa import CBSA, CBT, MSSA, TSSA, SoftmaxAttention, attention_flops, count_flops

D, H, P = 32, 4, 8


@pytest.mark.parametrize("N", [16, 50, 128])
def test_counter_matches_closed_forms(N):
    x = torch.randn(1, N, D)
    torch.manual_seed(0)
    layers = {
        "cbsa": CBSA(D, H, P, num_reps=4, rep_init="pool1d", has_cls=False),
        "mssa": MSSA(D, H, P),
        "softmax": SoftmaxAttention(D, H, P),
        "tssa": TSSA(D, H, P),
    }
    for kind, layer in layers.items():
        assert count_flops(layer, x) == attention_flops(kind, N, D, H, P, 4), kind


def test_cbsa_linear_mssa_quadratic_in_n():
    sizes = [64, 128, 192, 256]
    cb = [attention_flops("cbsa", n, D, H, P, 16) for n in sizes]
    ms = [attention_flops("mssa", n, D, H, P) for n in sizes]
    second = [a - 2 * b + c for a, b, c in zip(cb, cb[1:], cb[2:], strict=False)]
    assert second == [0, 0]  # exactly linear in N
    second_ms = [a - 2 * b + c for a, b, c in zip(ms, ms[1:], ms[2:], strict=False)]
    assert second_ms[0] == second_ms[1] == 2 * H * 2 * P * 2 * 64**2  # 4HP * 2 h^2 FLOPs


def test_model_count_grows_with_depth():
    x = torch.randn(1, 1, 16, 16)
    one = count_flops(CBT(16, 4, 1, 10, 32, 1, 4, num_reps=4).eval(), x)
    two = count_flops(CBT(16, 4, 1, 10, 32, 2, 4, num_reps=4).eval(), x)
    block = attention_flops("cbsa", 17, 32, 4, 8, 4) + 2 * 17 * 32 * 32 * 2  # + ISTA: 2 matmuls
    assert two - one == block


@pytest.mark.slow  # torch's counter imports torch's compiler (seconds)
@pytest.mark.parametrize("attn", ["cbsa", "mssa", "tssa", "softmax"])
def test_model_count_matches_torch_flop_counter(attn):
    from torch.utils.flop_counter import FlopCounterMode

    model = CBT(16, 4, 1, 10, 32, 2, 4, num_reps=4, attn=attn).eval()
    x = torch.randn(3, 1, 16, 16)
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(x)
    assert count_flops(model, x) == counter.get_total_flops()
