"""The training loop: EMA, frozen reference, LoRA (the paper's set-up) and the switches."""

import copy

import pytest
import torch
from torch import nn

from gradspo import DDIMScheduler, GradSPOTrainer, LoRALinear, add_lora, ema_update
from gradspo.toy import MLPDenoiser, directional


def _trainer(**kw):
    torch.manual_seed(0)
    args = {"steps": 5, "start_step": 1, "batch_size": 4, "train_batch_size": 4, "lr": 1e-2}
    return GradSPOTrainer(
        MLPDenoiser(hidden=16),
        None,
        directional(),
        DDIMScheduler(set_alpha_to_one=False),
        **{**args, **kw},
    )


def test_ema_update_is_exact_and_reference_never_changes():
    tr = _trainer()
    ref_before = copy.deepcopy(tr.ref.state_dict())
    ema_before = {k: v.clone() for k, v in tr.ema.state_dict().items()}
    # one update by hand: ema = 0.9 ema + 0.1 θ, exactly
    tr.optimizer.zero_grad()
    x = torch.randn(4, 2)
    (tr.model(x, torch.tensor([3, 4, 5, 6]), torch.arange(4)) ** 2).sum().backward()
    tr.optimizer.step()
    ema_update(tr.ema, tr.model, 0.9)
    theta = dict(tr.model.named_parameters())
    for name, p in tr.ema.named_parameters():
        assert torch.equal(p, ema_before[name].mul(0.9).add(theta[name], alpha=0.1))
    hist = tr.train(torch.arange(4), epochs=2)
    assert len(hist["loss"]) > 0 and all(h > 0 for h in hist["grad_norm"])
    for k, v in tr.ref.state_dict().items():
        assert torch.equal(v, ref_before[k])


def test_only_lora_parameters_get_gradients_and_init_equals_base():
    torch.manual_seed(0)
    base = MLPDenoiser(hidden=16)
    adapted = copy.deepcopy(base)
    params = add_lora(adapted, rank=4)
    x, t, c = torch.randn(6, 2), torch.randint(0, 1000, (6,)), torch.randint(-1, 4, (6,))
    assert torch.equal(adapted(x, t, c), base(x, t, c))  # B = 0 at init
    adapted(x, t, c).pow(2).sum().backward()
    names = {n for n, p in adapted.named_parameters() if p.requires_grad}
    assert names and all("lora_" in n for n in names)
    assert all(p.grad is None for n, p in adapted.named_parameters() if "lora_" not in n)
    assert len(params) == 2 * len(base.blocks) + 2  # temb and the hidden blocks (16 × 16)
    assert isinstance(adapted.blocks[0], LoRALinear) and isinstance(adapted.inp, nn.Linear)


def test_training_moves_only_lora_and_changes_the_output():
    tr = _trainer()
    frozen = {n: p.clone() for n, p in tr.model.named_parameters() if "lora_" not in n}
    x, t, c = torch.randn(5, 2), torch.full((5,), 500), torch.arange(5) % 4
    before = tr.ref(x, t, c)
    tr.train(torch.arange(8) % 4, epochs=1)
    for n, p in tr.model.named_parameters():
        if "lora_" not in n:
            assert torch.equal(p, frozen[n])
    assert not torch.allclose(tr.model(x, t, c), before)


@pytest.mark.parametrize(
    "kw",
    [
        {"method": "spo"},
        {"method": "dpo"},
        {"use_ema": False},
        {"clip": None},
        {"K": 2},
        {"gap_threshold": 0.05},
        {"lora_rank": None},
    ],
)
def test_each_method_and_switch_trains_deterministically(kw):
    h1 = _trainer(**kw).train(torch.arange(4), epochs=1)
    h2 = _trainer(**kw).train(torch.arange(4), epochs=1)
    assert h1["loss"] == h2["loss"] and len(h1["loss"]) > 0
    assert all(torch.isfinite(torch.tensor(h1["loss"])))


def test_gradspo_raises_the_reward_of_a_sampler_on_a_toy_problem():
    # with a zero reference predictor, guidance alone must move samples toward u_c
    torch.manual_seed(0)

    class Zero(nn.Module):
        dim = 2

        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)
            self.head = nn.Linear(8, 2)
            nn.init.zeros_(self.head.weight)
            nn.init.zeros_(self.head.bias)

        def forward(self, x, t, c):
            return self.head(torch.tanh(self.lin(torch.cat([x, torch.zeros(x.shape[0], 6)], 1))))

    tr = GradSPOTrainer(
        Zero(),
        None,
        directional(),
        DDIMScheduler(set_alpha_to_one=False),
        lr=3e-2,
        lora_rank=None,
        steps=6,
        start_step=0,
        batch_size=32,
        train_batch_size=32,
        cfg_scale=1.0,
        seed=0,
    )
    hist = tr.train(torch.zeros(32 * 6, dtype=torch.long), epochs=1)
    assert sum(hist["reward"][-2:]) / 2 > sum(hist["reward"][:2]) / 2 + 0.1
