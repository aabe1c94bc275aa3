import torch
from torch import nn

from gora import collect_gradients, plan_gora
from paperkit.testing import assert_close, assert_param_error


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def _loss(model, batch):
    x, y = batch
    return nn.functional.cross_entropy(model(x), y)


def _batches(n, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [(torch.randn(10, 6, generator=gen), torch.randint(0, 3, (10,), generator=gen))] * n


def test_gradient_is_the_average_over_batches_and_leaves_the_model_alone():
    model = _mlp()
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randn(5, 6, generator=gen), torch.randint(0, 3, (5,), generator=gen))]
    batches += [(torch.randn(5, 6, generator=gen), torch.randint(0, 3, (5,), generator=gen))]
    model[0].bias.requires_grad_(False)
    G = collect_gradients(model, batches, _loss, ["0", "2"], n_steps=2)
    ref = [torch.autograd.grad(_loss(model, b), model[2].weight)[0] for b in batches]
    assert_close(G["2"], (ref[0] + ref[1]) / 2, rtol=1e-6, atol=1e-8)
    assert G["0"].shape == (8, 6) and G["0"].dtype == torch.float32
    assert model[0].bias.requires_grad is False and model[2].bias.requires_grad is True
    assert all(p.grad is None for p in model.parameters())


def test_n_steps_caps_the_pass():
    calls = []
    collect_gradients(_mlp(), _batches(10), lambda m, b: calls.append(1) or _loss(m, b), ["0"], 4)
    assert len(calls) == 4


def test_adaptive_stops_early_on_a_stationary_stream():
    calls = []

    def loss_fn(m, b):
        calls.append(1)
        return _loss(m, b)

    collect_gradients(_mlp(), _batches(32), loss_fn, ["0", "2"], n_steps=32, adaptive=True)
    assert len(calls) == 3  # importance unchanged from step 2 on; min_steps = 3
    calls.clear()
    # A stream whose gradient keeps changing by far more than 10% does not stop early.
    gen = torch.Generator().manual_seed(0)
    growing = [
        (k * torch.randn(10, 6, generator=gen), torch.randint(0, 3, (10,))) for k in range(1, 9)
    ]
    growing = [(x * 4.0**i, y) for i, (x, y) in enumerate(growing)]
    collect_gradients(_mlp(), growing, loss_fn, ["0"], n_steps=8, adaptive=True, tol=0.01)
    assert len(calls) == 8


def test_plan_is_deterministic_under_a_generator():
    def plan():
        p = plan_gora(
            _mlp(),
            _batches(4),
            _loss,
            ["0", "2"],
            base_rank=2,
            generator=torch.Generator().manual_seed(3),
        )
        return [t for A, B in p.factors.values() for t in (A, B)]

    first, second = plan(), plan()
    assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True))


def test_gradient_errors():
    model = _mlp()
    assert_param_error(collect_gradients, model, _batches(1), _loss, ["9"], param="target_modules")
    assert_param_error(
        collect_gradients, model, _batches(1), _loss, ["1"], param="target_modules"
    )  # a ReLU, not a Linear
    model[1].unused = nn.Linear(2, 2)  # inside the ReLU: never called
    assert_param_error(
        collect_gradients, model, _batches(1), _loss, ["1.unused"], param="target_modules"
    )  # no gradient reaches it
    assert_param_error(collect_gradients, model, [], _loss, ["0"], param="batches")
    assert_param_error(
        collect_gradients, model, _batches(1), _loss, ["0"], param="n_steps", n_steps=0
    )
    assert_param_error(
        collect_gradients, model, _batches(1), _loss, "0", param="target_modules", exc=TypeError
    )
