import copy

import numpy as np
import pytest
import torch

from gmpqte import (
    GMPQTE,
    layer_te_details,
    layer_topological_entropy,
    persistent_entropy,
    shapes8x8,
    small_cnn,
    upsample,
)
from gmpqte.topology import cubical_diagrams
from paperkit.testing import assert_param_error


@pytest.fixture(scope="module")
def model64():
    """An untrained CNN in float64 with batch norms as identities (eval, fresh statistics)."""
    torch.manual_seed(0)
    return small_cnn().double().eval()


@pytest.fixture(scope="module")
def batch():
    x, _ = shapes8x8(8, seed=3)
    return upsample(x, 16).double()


@pytest.mark.parametrize("mode", ["cubical", "pointcloud"])
@pytest.mark.parametrize("c", [2.0, 3.7, 0.05])
def test_te_invariant_to_rescaling_a_relu_layer(model64, batch, mode, c):
    # conv2 -> ReLU is positively homogeneous: scaling its weight and bias by c > 0 scales its
    # post-activation output by c, which min-max normalisation (cubical) and z-scoring
    # (point cloud) remove
    scaled = copy.deepcopy(model64)
    with torch.no_grad():
        scaled.conv2.weight.mul_(c)
        scaled.conv2.bias.mul_(c)
    kw = dict(layers=["conv2"], mode=mode, max_channels=8)
    a = layer_topological_entropy(model64, batch, **kw)["conv2"]
    b = layer_topological_entropy(scaled, batch, **kw)["conv2"]
    assert a > 0
    assert abs(a - b) <= 1e-9


def test_constant_feature_map_has_zero_te(model64, batch):
    assert persistent_entropy(cubical_diagrams(np.full((6, 6), 0.3))[0]) == 0.0
    dead = copy.deepcopy(model64)
    with torch.no_grad():
        dead.conv1.weight.zero_()
        dead.conv1.bias.fill_(0.5)  # every conv1 map is the constant 0.5
    for skip in (True, False):
        d = layer_te_details(dead, batch, layers=["conv1"], skip_constant=skip)["conv1"]
        assert d.te == 0.0 and d.constant_share == 1.0
    assert layer_topological_entropy(dead, batch, layers=["conv1"], mode="pointcloud") == {
        "conv1": 0.0
    }


def test_skip_constant_counts_dead_channels_as_zero(model64, batch):
    half = copy.deepcopy(model64)
    with torch.no_grad():
        half.conv1.weight[:8].zero_()
        half.conv1.bias[:8].fill_(-1.0)  # 8 of 16 channels dead after ReLU
    skip = layer_te_details(half, batch, layers=["conv1"])["conv1"]
    count = layer_te_details(half, batch, layers=["conv1"], skip_constant=False)["conv1"]
    assert skip.constant_share >= 0.5 and count.constant_share == skip.constant_share
    # constant maps as 0 in the mean: TE scales by the share of non-constant maps
    assert count.te == pytest.approx(skip.te * (1 - skip.constant_share), rel=1e-12)


def test_determinism_under_seed(model64, batch):
    kw = dict(max_channels=4)
    a = layer_topological_entropy(model64, batch, seed=5, **kw)
    b = layer_topological_entropy(model64, batch, seed=5, **kw)
    c = layer_topological_entropy(model64, batch, seed=6, **kw)
    assert a == b
    assert a != c  # another channel sample


def test_mixed_labels_refused_unless_allowed(model64, batch):
    labels = torch.tensor([0, 0, 0, 1, 0, 0, 0, 0])
    assert_param_error(layer_topological_entropy, model64, batch, labels=labels, param="labels")
    with pytest.raises(ValueError, match="'labels'"):
        GMPQTE(max_channels=2).fit(model64, batch, labels)
    te = layer_topological_entropy(model64, batch, labels=labels, allow_mixed=True, max_channels=2)
    assert set(te) == {"conv1", "conv2", "conv3", "conv4", "fc"}
    same = torch.zeros(8, dtype=torch.int64)
    assert layer_topological_entropy(model64, batch, labels=same, max_channels=2) == te


def test_argument_errors(model64, batch):
    assert_param_error(layer_topological_entropy, model64, batch, layers=[], param="layers")
    assert_param_error(layer_topological_entropy, model64, batch[0], param="images")
    assert_param_error(layer_topological_entropy, model64, batch, layers=["pool"], param="layers")
    assert_param_error(layer_topological_entropy, model64, batch, mode="x", param="mode")


def test_summaries_and_dims(model64, batch):
    summed = layer_topological_entropy(model64, batch, layers=["conv3"], max_channels=4)
    mean = layer_topological_entropy(model64, batch, layers=["conv3"], max_channels=4, dims="mean")
    assert mean["conv3"] == pytest.approx(summed["conv3"] / 2, rel=1e-12)
    betti = layer_topological_entropy(
        model64, batch, layers=["conv3"], max_channels=4, summary="betti"
    )
    assert 0 < betti["conv3"] <= np.log(100)
