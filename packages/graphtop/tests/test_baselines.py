import copy

import pytest
import torch

from graphtop import (
    GPF,
    EdgePromptLite,
    FineTune,
    GCNEncoder,
    GPFPlus,
    LinearProbe,
    few_shot_split,
    make_csbm,
)
from paperkit.testing import assert_param_error

HIDDEN = 16


def setup():
    data = make_csbm(150, 3, 8, 5.0, 0.9, 1.5, seed=0)
    train, test = few_shot_split(data.y, shots=5, num_test=60, seed=0)
    torch.manual_seed(0)
    return data, train, test, GCNEncoder(8, HIDDEN, HIDDEN)


@pytest.mark.parametrize("cls", [GPF, GPFPlus, EdgePromptLite])
def test_zero_prompt_is_the_linear_probe(cls):
    data, train, test, enc = setup()
    probe = LinearProbe(enc, 3, hidden=HIDDEN).fit(data, train, epochs=3)
    model = cls(enc, 3, hidden=HIDDEN)
    model.classifier.load_state_dict(probe.classifier.state_dict())
    with torch.no_grad():
        for p in model.trainable_parameters():
            if p is not model.classifier.weight and p is not model.classifier.bias:
                p.zero_()
    assert torch.allclose(
        model.predict_proba(data, test), probe.predict_proba(data, test), atol=1e-6
    )


@pytest.mark.parametrize("cls", [LinearProbe, GPF, GPFPlus, EdgePromptLite])
def test_prompts_train_and_leave_the_encoder_alone(cls):
    data, train, test, enc = setup()
    before = copy.deepcopy(enc.state_dict())
    model = cls(enc, 3, hidden=HIDDEN).fit(data, train, epochs=40, lr=1e-2)
    assert all(torch.equal(before[k], v) for k, v in enc.state_dict().items())
    assert model.history_[-1]["ce"] < model.history_[0]["ce"]
    assert model.predict(data, test).shape == (60,)


def test_finetune_trains_a_copy_and_restarts_from_the_pretrained_weights():
    data, train, test, enc = setup()
    before = copy.deepcopy(enc.state_dict())
    model = FineTune(enc, 3, hidden=HIDDEN).fit(data, train, epochs=20, lr=1e-2)
    assert all(torch.equal(before[k], v) for k, v in enc.state_dict().items())
    assert any(not torch.equal(before[k], v) for k, v in model.encoder.state_dict().items())
    first = model.predict_proba(data, test)
    model.fit(data, train, epochs=20, lr=1e-2)  # same seed, same start: same model
    assert torch.equal(first, model.predict_proba(data, test))


def test_gpf_plus_mixes_its_basis_per_node():
    data, _, _, enc = setup()
    model = GPFPlus(enc, 3, hidden=HIDDEN, num_basis=4)
    x = data.x[:5]
    added = model.prompted(x) - x
    alpha = torch.softmax(model.attention(x), -1)
    assert torch.allclose(added, alpha @ model.prompt, atol=1e-6)
    assert not torch.allclose(added[0], added[1])


def test_bad_inputs():
    data, train, _, enc = setup()
    assert_param_error(
        EdgePromptLite, torch.nn.Linear(8, 16), 3, hidden=HIDDEN, param="encoder", exc=TypeError
    )
    assert_param_error(GPFPlus, enc, 3, hidden=HIDDEN, num_basis=0, param="num_basis")
    assert_param_error(LinearProbe, enc, 1, hidden=HIDDEN, param="num_classes")
    assert_param_error(GPF, "encoder", 3, param="encoder", exc=TypeError)
    probe = LinearProbe(enc, 3, hidden=HIDDEN)
    assert_param_error(probe.fit, data, [], param="train_nodes")
    assert_param_error(probe.fit, data, train, epochs=0, param="epochs")
