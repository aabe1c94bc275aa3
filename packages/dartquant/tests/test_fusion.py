import types

import pytest
import torch
from torch import nn

from dartquant import (
    fuse_rotations,
    inject_channel_outliers,
    quantize_model,
    quantized_copy,
    random_orthogonal,
    tiny_llama,
)
from dartquant.model import geometry
from dartquant.quant import QuantLinear
from paperkit.testing import assert_close, assert_param_error


def _model(n_kv_heads=None, seed=0, ffn_dim=None, family="llama", dtype=torch.float32):
    torch.manual_seed(seed)
    model = tiny_llama(96, 32, 2, 4, n_kv_heads, ffn_dim=ffn_dim, family=family).to(dtype).eval()
    with torch.no_grad():  # non-trivial norm gains and biases, which fusion must carry over
        model.model.embed_tokens.weight[:, :2] += 30.0  # massive-activation channels
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.uniform_(0.5, 1.5)
            elif name.endswith("proj.weight"):
                p.normal_(0, 0.2)
            elif name.endswith("proj.bias"):
                p.normal_(0, 0.5)
    return model


def _rotations(model, seed=0, dtype=torch.float32):
    g = geometry(model)
    R1 = random_orthogonal(g.dim, seed, dtype=dtype)
    R2s = [
        torch.stack(
            [
                random_orthogonal(g.head_dim, seed + 10 * i + k, dtype=dtype)
                for k in range(g.n_kv_heads)
            ]
        )
        for i in range(g.n_layers)
    ]
    return R1, R2s


def _logits(model, tokens):
    return model(tokens).logits


def _rms_norm_in_input_dtype(self, x):
    return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))


def _float64_norms(model):
    """transformers' RMSNorm casts its input to float32 (even a float64 one); the same norm
    computed in the input's dtype, so a float64 model is float64 throughout."""
    for m in model.modules():
        if type(m).__name__.endswith("RMSNorm"):
            m.forward = types.MethodType(_rms_norm_in_input_dtype, m)
    return model


@pytest.mark.parametrize("family", ["llama", "qwen2"])
@pytest.mark.parametrize("n_kv_heads", [4, 2])
@pytest.mark.parametrize("online", [False, True])
def test_fusion_preserves_logits_in_float64(family, n_kv_heads, online):
    """The fused, unquantised model computes the original's logits (fp64, 1e-8): norm
    absorption, R1, R2 per KV head (Qwen2: through the q/k/v biases) and R3/R4. The norms are
    computed in float64 here (transformers' own cast to float32 bounds the agreement at ~1e-7,
    checked in the next test)."""
    model = _float64_norms(_model(n_kv_heads, family=family, dtype=torch.float64))
    tokens = torch.randint(0, 96, (2, 24), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        before = _logits(model, tokens)
        R1, R2s = _rotations(model, dtype=torch.float64)
        fuse_rotations(model, R1, R2s, online_hadamard=online)
        after = _logits(model, tokens)
    assert (after - before).abs().max().item() < 1e-8
    original = _model(n_kv_heads, family=family, dtype=torch.float64)
    assert not torch.allclose(model.model.embed_tokens.weight, original.model.embed_tokens.weight)
    assert all(
        getattr(layer.mlp.down_proj, "dartquant_hadamard", False) == online
        for layer in model.model.layers
    )


def test_fusion_with_transformers_float32_norms():
    model = _model(2, family="qwen2", dtype=torch.float64)
    tokens = torch.randint(0, 96, (2, 24), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        before = _logits(model, tokens)
        fuse_rotations(model, *_rotations(model, dtype=torch.float64), online_hadamard=True)
        after = _logits(model, tokens)
    assert (after - before).abs().max().item() < 1e-5


def test_fusion_unties_a_tied_head():
    model = _float64_norms(_model(dtype=torch.float64))
    model.lm_head.weight = model.model.embed_tokens.weight  # as in checkpoints with tied heads
    tokens = torch.randint(0, 96, (2, 12))
    with torch.no_grad():
        before = _logits(model, tokens)
        fuse_rotations(model, *_rotations(model, dtype=torch.float64), online_hadamard=True)
        after = _logits(model, tokens)
    assert model.lm_head.weight is not model.model.embed_tokens.weight
    assert not model.config.tie_word_embeddings
    assert (after - before).abs().max().item() < 1e-8


def test_fusion_rotates_the_residual_stream():
    model = _model()
    tokens = torch.randint(0, 96, (1, 8))
    R1, _ = _rotations(model)
    seen = []
    norm = model.model.layers[1].input_layernorm
    hook = norm.register_forward_pre_hook(lambda _m, a: seen.append(a[0]))
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
        before = _logits(model, tokens)
        inject_channel_outliers(model, 30.0, 2)
        hook = model.model.layers[0].self_attn.o_proj.register_forward_pre_hook(
            lambda _m, a: seen.append(a[0])
        )
        after = _logits(model, tokens)
        hook.remove()
    assert (after - before).abs().max().item() < 1e-4
    x = seen[0].flatten(0, 1)
    assert (x.abs().amax(-1) / x.pow(2).mean(-1).sqrt()).mean() > 4


def test_quantize_model_replaces_projections():
    model = quantize_model(_model(), 4, 4, 4)
    kinds = [type(layer.self_attn.q_proj) for layer in model.model.layers]
    assert kinds == [QuantLinear, QuantLinear]
    assert isinstance(model.lm_head, nn.Linear)
    assert model.model.layers[0].self_attn.dartquant_kv_bits == 4
    assert_param_error(quantize_model, model, 4, 4, 4, param="model")  # already quantised
    assert_param_error(fuse_rotations, model, param="model")


def test_gptq_model_quantisation_needs_tokens():
    model = _model()
    assert_param_error(quantize_model, model, 4, 4, 4, weight_quant="gptq", param="calib_tokens")
    q = quantize_model(
        _model(), 4, None, None, weight_quant="gptq", calib_tokens=torch.randint(0, 96, (4, 16))
    )
    assert q.model.layers[0].mlp.down_proj.weight_prequantized


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


def test_quantising_a_fused_model_keeps_its_online_hadamards():
    """16-bit quantisation of a rotated model is its full-precision self: the R3/R4 switches
    survive the projections' replacement by QuantLinear."""
    model = _model()
    fuse_rotations(model, *_rotations(model), online_hadamard=True)
    q = quantized_copy(model, 16, 16, 16, a_clip=1.0)
    tokens = torch.randint(0, 96, (2, 16))
    with torch.no_grad():
        assert (_logits(q, tokens) - _logits(model, tokens)).abs().max().item() < 1e-3
    assert all(layer.mlp.down_proj.dartquant_hadamard for layer in q.model.layers)
