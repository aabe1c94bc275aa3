import copy

import pytest
import torch

from fadapter import (
    AdapterAFNO2d,
    AFNO2d,
    FAdapterAFNO2d,
    LoRAAFNO2d,
    LoRALinear,
    OperatorNet,
    apply_peft,
    band_dims,
    count_trainable,
)
from fadapter.adapters import MLPAdapter
from paperkit.testing import assert_param_error


def small_net():
    torch.manual_seed(0)
    return OperatorNet(in_frames=2, width=16, depth=2, num_blocks=2, modes=4)


def test_only_adapter_params_train_and_backbone_is_unchanged():
    net = small_net()
    before = {name: p.detach().clone() for name, p in net.named_parameters()}
    ids = {id(p): name for name, p in net.named_parameters()}
    apply_peft(net, "fadapter", adapter_dim=4)
    for name, p in net.named_parameters():
        assert p.requires_grad == (".adapters." in name), name
        assert (id(p) in ids) == (not p.requires_grad)  # frozen = the backbone's own tensors
    x, y = torch.randn(4, 16, 16, 2), torch.randn(4, 16, 16, 1)
    for _ in range(3):  # plain SGD steps on every parameter that received a gradient
        net.zero_grad()
        (net(x) - y).pow(2).mean().backward()
        with torch.no_grad():
            for p in net.parameters():
                if p.grad is not None:
                    p -= 0.1 * p.grad
        assert all(p.grad is None for p in net.parameters() if not p.requires_grad)
    after = {ids[id(p)]: p for p in net.parameters() if id(p) in ids}
    assert set(after) == set(before)
    assert all(torch.equal(after[n], before[n]) for n in before)
    assert any(p.abs().sum() > 0 for n, p in net.named_parameters() if ".up." in n)


@pytest.mark.parametrize("hidden", [1, 2])
@pytest.mark.parametrize("positions", [("in", "mid", "out"), ("mid",), ("in", "out")])
def test_parameter_count_closed_form(hidden, positions):
    width, nb, modes, depth, d = 24, 3, 6, 2, 5
    net = OperatorNet(
        in_frames=2, width=width, depth=depth, num_blocks=nb, modes=modes, hidden_factor=hidden
    )
    apply_peft(net, "fadapter", adapter_dim=d, num_bands=3, positions=positions)
    c = width // nb
    dims = band_dims(modes, 3, d)
    # sum over layers, blocks, bands and positions of (2 c d_b + d_b + c), mid on c*hidden
    expected = sum(
        depth * nb * (2 * cp * db + db + cp)
        for pos in positions
        for cp in [c * hidden if pos == "mid" else c]
        for db in dims
    )
    assert count_trainable(net) == expected


def test_spec_budgets_of_the_reproduction():
    net = OperatorNet()
    counts = {}
    for method, kw in [
        ("fadapter", {"adapter_dim": 4}),
        ("adapter", {"adapter_dim": 15}),
        ("lora", {"rank": 2}),
        ("lora", {"rank": 8}),
        ("head", {}),
        ("full", {}),
    ]:
        counts[(method, tuple(kw.values()))] = count_trainable(
            apply_peft(copy.deepcopy(net), method, **kw)
        )
    # closed forms: 4 layers x 3 positions x 8 blocks x sum_b(17 d_b + 8), d = [6, 4, 2, 2];
    # vanilla: 4 x 3 x 8 x (17*15 + 8); LoRA: 4 x [r (64+128) x 2 + 2 x 2 x 8 x r (8 + 8)]
    assert counts[("fadapter", (4,))] == 4 * 3 * 8 * (17 * 14 + 4 * 8) == 25_920
    assert counts[("adapter", (15,))] == 4 * 3 * 8 * (17 * 15 + 8) == 25_248
    assert counts[("lora", (2,))] == 4 * (2 * 192 * 2 + 4 * 8 * 2 * 16) == 7_168
    assert counts[("lora", (8,))] == 28_672
    assert counts[("head", ())] == 64 * 4 + 4
    # the +MLP variants: 4 blocks x (2 x 64 x 4 + 4 + 64) more
    fa_mlp = apply_peft(copy.deepcopy(net), "fadapter", adapter_dim=4, mlp_adapter_dim=4)
    ad_mlp = apply_peft(copy.deepcopy(net), "adapter", adapter_dim=15, mlp_adapter_dim=4)
    assert count_trainable(fa_mlp) == 25_920 + 4 * 580 == 28_240
    assert count_trainable(ad_mlp) == 25_248 + 4 * 580 == 27_568
    assert counts[("full", ())] == 78_404


@pytest.mark.parametrize("method", ["fadapter", "adapter", "lora"])
def test_peft_models_equal_the_backbone_at_init(method):
    net = small_net()
    x = torch.randn(2, 16, 16, 2)
    ref = net(x)
    out = apply_peft(net, method, **({"rank": 3} if method == "lora" else {"adapter_dim": 3}))(x)
    assert torch.equal(out, ref)


def test_apply_peft_replaces_layers_with_the_right_types():
    net = apply_peft(small_net(), "lora", rank=2)
    assert all(isinstance(b.filter, LoRAAFNO2d) for b in net.blocks)
    assert all(
        isinstance(b.mlp[0], LoRALinear) and isinstance(b.mlp[2], LoRALinear) for b in net.blocks
    )
    assert not isinstance(net.head, LoRALinear)
    assert isinstance(apply_peft(small_net(), "adapter").blocks[0].filter, AdapterAFNO2d)
    assert isinstance(apply_peft(small_net(), "fadapter").blocks[1].filter, FAdapterAFNO2d)


def test_lora_spectral_update_is_rank_r_per_block():
    layer = AFNO2d(16, num_blocks=2, modes=4)
    lora = LoRAAFNO2d(layer, rank=2, alpha=2.0)
    with torch.no_grad():
        lora.b1.normal_()
    delta = lora.weights()[0] - layer.w1
    ranks = torch.linalg.matrix_rank(delta.reshape(-1, 8, 8))
    assert ranks.tolist() == [2, 2, 2, 2]


def test_patch_adapter_and_train_head():
    net = apply_peft(small_net(), "fadapter", adapter_dim=2, patch_adapter_dim=3, train_head=True)
    trainable = {n for n, p in net.named_parameters() if p.requires_grad}
    assert {"embed.down.weight", "embed.up.weight", "head.weight", "head.bias"} <= trainable
    assert "embed.embed.weight" not in trainable


@pytest.mark.parametrize("method", ["fadapter", "adapter"])
def test_mlp_adapters_sit_beside_every_mlp_and_start_as_zero(method):
    net = small_net()
    x = torch.randn(2, 16, 16, 2)
    ref = net(x)
    plain = count_trainable(apply_peft(copy.deepcopy(net), method, adapter_dim=3))
    apply_peft(net, method, adapter_dim=3, mlp_adapter_dim=5)
    assert all(isinstance(b.mlp, MLPAdapter) for b in net.blocks)
    assert torch.equal(net(x), ref)  # zero up-projection: the backbone at initialisation
    # per block (width 16): a 16 -> 5 -> 16 bottleneck, 2*16*5 + 5 + 16 parameters
    assert count_trainable(net) == plain + 2 * (2 * 16 * 5 + 5 + 16)
    trainable = {n for n, p in net.named_parameters() if p.requires_grad}
    assert "blocks.0.mlp.up.weight" in trainable and "blocks.0.mlp.mlp.0.weight" not in trainable
    with torch.no_grad():
        net.blocks[0].mlp.up.weight.normal_()
    block = net.blocks[0]
    h = torch.randn(3, 16)
    manual = block.mlp.mlp(h) + block.mlp.up(torch.nn.functional.gelu(block.mlp.down(h)))
    assert torch.allclose(block.mlp(h), manual)


def test_apply_peft_errors():
    assert_param_error(apply_peft, small_net(), "prefix", param="method")
    assert_param_error(apply_peft, small_net(), "lora", rank=0, param="rank")
    assert_param_error(apply_peft, small_net(), "fadapter", adapter_dim=0, param="adapter_dim")
    assert_param_error(apply_peft, small_net(), "fadapter", num_bands=5, param="num_bands")
    assert_param_error(apply_peft, small_net(), "lora", adapter_dim=2, param="adapter_dim")
    assert_param_error(apply_peft, torch.nn.Linear(2, 2), "lora", param="model")
    assert_param_error(
        apply_peft, small_net(), "adapter", mlp_adapter_dim=-1, param="mlp_adapter_dim"
    )
    assert_param_error(apply_peft, small_net(), "lora", mlp_adapter_dim=2, param="mlp_adapter_dim")
