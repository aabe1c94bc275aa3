import pytest
import torch

from gspn2 import GSPN1Mixer, GSPN2Mixer, GSPNClassifier, SoftmaxMixer
from paperkit.testing import (
    assert_param_error,
    check_dtype_device,
    check_finite,
    check_seeded_determinism,
    check_state_dict_roundtrip,
)


@pytest.mark.parametrize(
    "make",
    [
        lambda: GSPN2Mixer(16),
        lambda: GSPN2Mixer(16, proxy_dim=4, groups=2, chunk=3),
        lambda: GSPN2Mixer(16, shared=False),
        lambda: GSPN1Mixer(16),
        lambda: SoftmaxMixer(16, heads=4),
    ],
)
def test_mixer_contract(make):
    x = torch.randn(2, 16, 5, 6)
    out = check_dtype_device(make(), x)
    assert out.shape == x.shape
    check_finite(out)
    check_state_dict_roundtrip(make, x)
    check_seeded_determinism(lambda: make()(torch.randn(2, 16, 5, 6)))


def test_gspn2_has_fewer_propagation_parameters_than_gspn1():
    """GSPN-2's channel-shared weights: 4·3·G gate channels instead of 4·3·C_in."""
    dim, d_state = 32, 16
    shared, per_channel = GSPN2Mixer(dim, d_state=d_state), GSPN1Mixer(dim, d_state=d_state)
    assert shared.propagation_parameters() == (d_state + 1) * 4 * 3 * 1
    assert per_channel.propagation_parameters() == (d_state + 1) * 4 * 3 * 2 * dim
    total = [sum(p.numel() for p in m.parameters()) for m in (shared, per_channel)]
    assert total[0] < total[1]


def test_mixer_propagates_globally():
    """One scan connects every pixel: the output at the far corner depends on pixel (0, 0)."""
    torch.manual_seed(0)
    mixer = GSPN2Mixer(8)
    x = torch.randn(1, 8, 7, 7, requires_grad=True)
    mixer(x)[0, :, -1, -1].sum().backward()
    assert x.grad[0, :, 0, 0].abs().sum() > 0
    local = GSPN2Mixer(8, chunk=2)
    x.grad = None
    local(x)[0, :, -1, -1].sum().backward()
    assert x.grad[0, :, 0, 0].abs().sum() == 0  # 2-wide windows cannot reach 6 pixels away


def test_mixer_gradients_reach_every_parameter():
    mixer = GSPN2Mixer(8)
    mixer(torch.randn(2, 8, 4, 4)).square().sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in mixer.parameters())


@pytest.mark.parametrize("mixer", ["gspn2", "gspn1", "softmax"])
def test_classifier_shapes(mixer):
    model = GSPNClassifier(16, 1, 10, (8, 16), (1, 1), mixer=mixer)
    logits = model(torch.randn(3, 1, 16, 16))
    assert logits.shape == (3, 10)
    check_finite(logits)


def test_classifier_learns_a_position_task():
    """A few steps separate 'bright left half' from 'bright right half' (needs spatial mixing)."""
    torch.manual_seed(0)
    x = torch.zeros(64, 1, 8, 8)
    y = torch.arange(64) % 2
    x[y == 0, :, :, :4] = 1.0
    x[y == 1, :, :, 4:] = 1.0
    x += 0.1 * torch.randn_like(x)
    model = GSPNClassifier(8, 1, 2, (8,), (1,), mixer="gspn2", patch_size=2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(30):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.1
    assert (model(x).argmax(-1) == y).float().mean() == 1.0


def test_bad_mixer_and_model_arguments():
    assert_param_error(GSPN2Mixer, 0, param="dim")
    assert_param_error(GSPN2Mixer, 8, proxy_dim=6, groups=4, param="groups")
    assert_param_error(GSPN2Mixer, 8, chunk=0, param="chunk")
    assert_param_error(SoftmaxMixer, 10, heads=4, param="heads")
    assert_param_error(GSPN2Mixer(8), torch.randn(1, 4, 3, 3), param="x")
    assert_param_error(GSPNClassifier, 16, mixer="mamba", param="mixer")
    assert_param_error(GSPNClassifier, 10, dims=(8, 16), depths=(1, 1), param="img_size")
    assert_param_error(GSPNClassifier, 16, dims=(8, 16), depths=(1,), param="depths")
    assert_param_error(GSPNClassifier(16), torch.randn(2, 3, 16, 16), param="x")


@pytest.mark.parametrize(
    "build, count",
    [
        (
            lambda: GSPN2Mixer(16, proxy_dim=4, groups=2),
            lambda: GSPN2Mixer.parameter_count(16, 4, groups=2),
        ),
        (
            lambda: GSPN2Mixer(6, proxy_dim=None, d_state=5, shared=False),
            lambda: GSPN2Mixer.parameter_count(6, None, 5, shared=False),
        ),
        (lambda: GSPN1Mixer(16, d_state=8), lambda: GSPN1Mixer.parameter_count(16, d_state=8)),
        (lambda: SoftmaxMixer(16, heads=4), lambda: SoftmaxMixer.parameter_count(16)),
    ]
    + [
        (
            lambda m=m: GSPNClassifier(16, 3, 10, (8, 16), (1, 2), mixer=m, mlp_ratio=1.5),
            lambda m=m: GSPNClassifier.parameter_count(16, 3, 10, (8, 16), (1, 2), m, 2, 1.5),
        )
        for m in ("gspn2", "gspn1", "softmax")
    ],
)
def test_parameter_count_matches_the_built_module(build, count):
    """The formula the memory check uses counts exactly the parameters torch allocates."""
    assert count() == sum(p.numel() for p in build().parameters())


def test_modules_too_large_for_memory_are_refused_before_allocation(monkeypatch):
    monkeypatch.setenv("PAPERKIT_MAX_BYTES", str(2**20))  # 1 MiB: 262,144 float32 parameters
    GSPN2Mixer(64)  # about 60k parameters
    err = assert_param_error(GSPN2Mixer, 256, param="dim")
    assert "fit in memory" in str(err)
    assert_param_error(GSPN2Mixer, 8, proxy_dim=20_000, param="proxy_dim")
    assert_param_error(GSPNClassifier, 512, dims=(8,), depths=(1,), param="img_size")
    assert_param_error(
        GSPNClassifier, 16, dims=(8,), depths=(1,), mlp_ratio=5000.0, param="mlp_ratio"
    )
