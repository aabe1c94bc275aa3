import pytest
import torch
import torch.nn.functional as F
from torch import nn

from gmpqte import (
    accuracy,
    hawq_policy,
    hawq_trace_sensitivity,
    measured_sensitivity,
    quantize_model,
    random_policy,
    uniform_policy,
)
from paperkit.testing import assert_param_error


def test_hutchinson_trace_matches_the_exact_hessian_trace():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 3)).double()
    x, y = torch.randn(16, 3, dtype=torch.float64), torch.randint(0, 3, (16,))
    traces = hawq_trace_sensitivity(model, F.cross_entropy, [(x, y)], n_probe=1500)
    for name, layer in (("0", model[0]), ("2", model[2])):
        w0 = layer.weight.detach().clone()
        # exact trace of the Hessian of the loss in this layer's weight (autograd, 12 params)
        h = torch.autograd.functional.hessian(
            lambda w, layer=layer: F.cross_entropy(_with_weight(model, layer, w)(x), y), w0
        )
        exact = float(torch.diagonal(h.reshape(w0.numel(), w0.numel())).sum()) / w0.numel()
        assert traces[name] == pytest.approx(exact, rel=0.1, abs=1e-4)


def _with_weight(model, layer, w):
    """A functional copy of ``model`` whose ``layer`` uses weight ``w`` (keeps autograd to w)."""

    def run(x):
        for m in model:
            if m is layer:
                x = F.linear(x, w, m.bias)
            else:
                x = m(x)
        return x

    return run


def test_hawq_policy_minimises_trace_weighted_perturbation(trained):
    n = {k: float(dict(trained.named_modules())[k].weight.numel()) for k in ("conv1", "fc")}
    traces = {"conv1": 1.0, "fc": 1e-6}
    policy = hawq_policy(trained, traces, 3 * (n["conv1"] + n["fc"]), (2, 4, 8))
    # conv1 is far more sensitive, so it gets the bits the budget leaves
    assert policy["conv1"] >= policy["fc"]
    assert sum(n[l] * b for l, b in policy.items()) <= 3 * (n["conv1"] + n["fc"])


def test_measured_sensitivity_is_the_one_layer_accuracy_drop(trained, digits):
    x, y = digits["test"][0][:200], digits["test"][1][:200]
    sens = measured_sensitivity(trained, x, y, bits=2, layers=["conv2"])
    manual = accuracy(trained, x, y) - accuracy(quantize_model(trained, {"conv2": 2}, None), x, y)
    assert sens == {"conv2": pytest.approx(manual, abs=1e-12)}


def test_uniform_and_random_policies():
    n = {"a": 100.0, "b": 50.0, "c": 10.0}
    assert uniform_policy(n, 3) == {"a": 3, "b": 3, "c": 3}
    budget = 3.5 * sum(n.values())
    policies = [random_policy(n, budget, seed=s) for s in range(6)]
    assert policies[0] == random_policy(n, budget, seed=0)  # seeded
    assert len({tuple(p.values()) for p in policies}) > 1
    for p in policies:
        assert sum(n[l] * b for l, b in p.items()) <= budget
    assert_param_error(uniform_policy, [], param="layers")
    assert_param_error(random_policy, n, -5.0, param="budget_bits")
