import copy

import torch
from torch import nn

from dictpfl import (
    MLP,
    DictLinear,
    decompose_model,
    flatten_tables,
    lookup_parameters,
    shared_numel,
    unflatten_into,
)
from dictpfl.clientapp import local_train
from dictpfl.config import JobConfig
from paperkit.testing import assert_param_error, check_dtype_device, check_state_dict_roundtrip


def test_dictlinear_reproduces_the_linear_layer():
    # DePE at initialisation: W_res + D T is the pretrained weight
    torch.manual_seed(0)
    lin = nn.Linear(48, 32)
    layer = DictLinear(lin.weight, lin.bias, rank=8)
    x = torch.randn(5, 7, 48)
    assert torch.max(torch.abs(layer(x) - lin(x))) < 1e-5
    assert torch.max(torch.abs(layer.W_res + layer.D @ layer.T - lin.weight)) < 1e-6
    assert layer.D.shape == (32, 8) and layer.T.shape == (8, 48)
    # D = U S^1/2 and T = S^1/2 V^T share the singular values: D^T D = T T^T = S_r
    assert torch.allclose(layer.D.T @ layer.D, layer.T @ layer.T.T, atol=1e-4)
    check_dtype_device(layer, x)


def test_full_rank_leaves_no_residual():
    lin = nn.Linear(6, 4)
    layer = DictLinear(lin.weight, None, rank=4)
    assert torch.max(torch.abs(layer.W_res)) < 1e-6


def test_decompose_model_swaps_body_and_keeps_head():
    torch.manual_seed(0)
    model = MLP(64, (32, 32), 10)
    x = torch.randn(9, 64)
    ref = model(x)
    decompose_model(model, rank=4)
    assert all(isinstance(m, DictLinear) for m in model.body)
    assert isinstance(model.head, nn.Linear)
    assert torch.max(torch.abs(model(x) - ref)) < 1e-5
    # shared set: the tables (4*64 + 4*32) and the head (32*10 + 10)
    assert shared_numel(model) == 4 * 64 + 4 * 32 + 330
    assert len(lookup_parameters(model)) == 4


def test_only_tables_and_head_train(ref_data):
    # D and W_res stay bit-identical; only T and the head get gradients
    torch.manual_seed(0)
    model = decompose_model(MLP(64, (32, 32), 10), rank=4)
    frozen = {n: b.clone() for n, b in model.named_buffers()}
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    X, y = ref_data.clients[0]
    job = JobConfig(method="dictpfl", lr=1e-2, local_epochs=2, batch_size=32)
    local_train(model, X, y, job, torch.Generator().manual_seed(0))
    for name, buf in model.named_buffers():
        assert torch.equal(buf, frozen[name]), name
    for name, p in model.named_parameters():
        assert p.requires_grad == (name.endswith(".T") or name.startswith("head")), name
        assert not torch.equal(p, before[name]), f"{name} did not train"


def test_flatten_unflatten_round_trip():
    model = decompose_model(MLP(8, (6,), 3), rank=2)
    vec = torch.arange(shared_numel(model), dtype=torch.float32)
    unflatten_into(model, vec)
    assert torch.equal(flatten_tables(model), vec)
    assert_param_error(unflatten_into, model, vec[:-1], param="vec")


def test_bad_rank_raises():
    # ranks outside [1, min(d_out, d_in)] and non-matrices are refused
    w = torch.randn(5, 3)
    assert_param_error(DictLinear, w, None, 4, param="rank")
    assert_param_error(DictLinear, w, None, 0, param="rank")
    assert_param_error(DictLinear, torch.randn(5), None, 1, param="weight")
    assert_param_error(decompose_model, MLP(8, (6,), 3), 7, param="rank")
    assert_param_error(decompose_model, MLP(8, (6,), 3), 0, param="rank")


def test_state_dict_round_trip():
    def make():
        return decompose_model(MLP(8, (6,), 3), rank=2)

    check_state_dict_roundtrip(make, torch.randn(4, 8))
    copy.deepcopy(make())
