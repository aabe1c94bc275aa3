import pytest
import torch
from torch import nn

from dartquant import (
    TinyLlama,
    fuse_rotations,
    inject_channel_outliers,
    quantize_model,
    random_orthogonal,
)
from dartquant.quant import QuantLinear
from paperkit.testing import assert_close, assert_param_error


def _model(n_kv_heads=None, seed=0, ffn_dim=None):
    torch.manual_seed(seed)
    offset = torch.zeros(32)
    offset[:2] = 30.0
    model = TinyLlama(96, 32, 2, 4, n_kv_heads, ffn_dim=ffn_dim, embed_offset=offset).eval()
    with torch.no_grad():  # non-trivial norm gains, which fusion must absorb
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.uniform_(0.5, 1.5)
            elif name.endswith("proj.weight"):
                p.normal_(0, 0.2)
    return model


def _rotations(model, seed=0):
    R1 = random_orthogonal(model.dim, seed)
    R2s = [
        torch.stack(
            [random_orthogonal(model.head_dim, seed + 10 * i + k) for k in range(model.n_kv_heads)]
        )
        for i in range(len(model.layers))
    ]
    return R1, R2s


@pytest.mark.parametrize("n_kv_heads", [4, 2])
@pytest.mark.parametrize("online", [False, True])
def test_fusion_preserves_logits(n_kv_heads, online):
    model = _model(n_kv_heads)
    tokens = torch.randint(0, 96, (2, 24), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        before = model(tokens)
        R1, R2s = _rotations(model)
        fuse_rotations(model, R1, R2s, online_hadamard=online)
        after = model(tokens)
    assert (after - before).abs().max().item() < 1e-4
    assert not torch.allclose(model.embed.weight, _model(n_kv_heads).embed.weight)  # really rotated
    assert all(layer.mlp.online_hadamard == online for layer in model.layers)


def test_fusion_rotates_the_residual_stream():
    model = _model()
    tokens = torch.randint(0, 96, (1, 8))
    R1, _ = _rotations(model)
    seen = []
    hook = model.layers[1].attn_norm.register_forward_pre_hook(lambda _m, a: seen.append(a[0]))
    with torch.no_grad():
        model(tokens)
        fuse_rotations(model, R1)
        model(tokens)
    hook.remove()
    assert_close(seen[1], seen[0] @ R1, rtol=1e-4, atol=1e-4)


def test_outlier_injection_is_function_preserving_and_creates_outliers():
    model = _model()
    tokens = torch.randint(0, 96, (2, 16))
    seen = []
    with torch.no_grad():
        before = model(tokens)
        inject_channel_outliers(model, 30.0, 2)
        hook = model.layers[0].attn.o_proj.register_forward_pre_hook(
            lambda _m, a: seen.append(a[0])
        )
        after = model(tokens)
        hook.remove()
    assert (after - before).abs().max().item() < 1e-4
    x = seen[0].flatten(0, 1)
    assert (x.abs().amax(-1) / x.pow(2).mean(-1).sqrt()).mean() > 4


def test_quantize_model_replaces_projections():
    model = quantize_model(_model(), 4, 4, 4)
    kinds = [type(layer.attn.q_proj) for layer in model.layers]
    assert kinds == [QuantLinear, QuantLinear]
    assert isinstance(model.lm_head, nn.Linear) and model.layers[0].attn.kv_bits == 4
    assert_param_error(quantize_model, model, 4, 4, 4, param="model")  # already quantised
    assert_param_error(fuse_rotations, model, param="model")


def test_gptq_model_quantisation_needs_tokens():
    model = _model()
    assert_param_error(quantize_model, model, 4, 4, 4, weight_quant="gptq", param="calib_tokens")
    q = quantize_model(
        _model(), 4, None, None, weight_quant="gptq", calib_tokens=torch.randint(0, 96, (4, 16))
    )
    assert q.layers[0].mlp.down_proj.weight_prequantized


def test_errors():
    model = _model()
    assert_param_error(fuse_rotations, nn.Sequential(nn.Linear(4, 4)), param="model", exc=TypeError)
    assert_param_error(quantize_model, nn.Linear(4, 4), param="model", exc=TypeError)
    assert_param_error(fuse_rotations, model, torch.randn(32, 32), param="R1")
    assert_param_error(fuse_rotations, model, torch.eye(16), param="R1")
    assert_param_error(fuse_rotations, model, None, [torch.eye(8)], param="R2s")
    # online Hadamards need a power-of-2 ffn width: no Hadamard of size 96
    assert_param_error(fuse_rotations, _model(ffn_dim=96), online_hadamard=True, param="model")
    for bits in (1, 17):
        assert_param_error(quantize_model, _model(), bits, param="w_bits")
        assert_param_error(quantize_model, _model(), 4, bits, param="a_bits")
        assert_param_error(quantize_model, _model(), 4, 4, bits, param="kv_bits")
