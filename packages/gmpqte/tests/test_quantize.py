import pytest
import torch

from gmpqte import (
    accuracy,
    quantisable_layers,
    quantize_activation,
    quantize_model,
    quantize_weight,
    small_cnn,
    uniform_policy,
)


@pytest.mark.parametrize("bits", [1, 2, 3, 4, 8])
def test_b_bit_grid_has_at_most_2_to_the_b_levels(bits):
    w = torch.randn(6, 5, 3, 3)
    q = quantize_weight(w, bits)
    for c in range(6):
        assert torch.unique(q[c]).numel() <= 2**bits
    if bits >= 2:  # symmetric: at most 2^(b-1) - 1 steps of s_c each way, largest |w| kept
        scale = w.abs().amax(dim=(1, 2, 3)) / (2 ** (bits - 1) - 1)
        steps = q / scale[:, None, None, None]
        assert torch.allclose(steps, steps.round(), atol=1e-4)
        assert torch.allclose(q.abs().amax(dim=(1, 2, 3)), w.abs().amax(dim=(1, 2, 3)))


def test_quantisation_error_shrinks_with_bits():
    w = torch.randn(16, 64)
    errors = [float(((quantize_weight(w, b) - w) ** 2).sum()) for b in (2, 3, 4, 6, 8)]
    assert errors == sorted(errors, reverse=True)


def test_straight_through_gradients():
    w = torch.randn(4, 3, requires_grad=True)
    quantize_weight(w, 2).sum().backward()
    assert torch.equal(w.grad, torch.ones_like(w))
    x = torch.rand(10, requires_grad=True)
    quantize_activation(x, 4).pow(2).sum().backward()
    assert torch.allclose(x.grad, 2 * quantize_activation(x.detach(), 4))


def test_activation_grid():
    x = torch.rand(1000)
    q = quantize_activation(x, 3)
    assert torch.unique(q).numel() <= 8
    assert float((q - x).abs().max()) <= (float(x.max() - x.min()) / 7) / 2 + 1e-6


def test_8_bit_rtn_keeps_digits_accuracy(trained, digits):
    # 8-bit weights and activations: accuracy changes by less than 1 point
    full = accuracy(trained, *digits["test"])
    q8 = accuracy(
        quantize_model(trained, uniform_policy(quantisable_layers(trained), 8)), *digits["test"]
    )
    assert full > 0.9
    assert abs(full - q8) < 0.01
    q2 = accuracy(
        quantize_model(trained, uniform_policy(quantisable_layers(trained), 2)), *digits["test"]
    )
    assert q2 < full - 0.05  # 2 bits everywhere does hurt, so the check above can fail


def test_quantize_model_leaves_the_original_alone():
    m = small_cnn()
    before = m.conv1.weight.clone()
    q = quantize_model(m, {"conv1": 2})
    assert torch.equal(m.conv1.weight, before) and type(m.conv1).__name__ == "Conv2d"
    assert type(q.conv2).__name__ == "Conv2d"  # layers not in the policy stay full precision
    with pytest.raises(ValueError, match="'policy'"):
        quantize_model(m, {"pool": 4})
