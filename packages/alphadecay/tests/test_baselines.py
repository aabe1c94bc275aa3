import copy
import math

import pytest
import torch

from alphadecay import AdaDecayAdamW, AWDAdamW
from paperkit.testing import assert_close, assert_param_error


def _params(seed=0):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.nn.Parameter(torch.randn(6, 5, dtype=torch.float64, generator=g)),
        torch.nn.Parameter(torch.randn(5, dtype=torch.float64, generator=g)),
    ]


def _set_grads(params, seed):
    g = torch.Generator().manual_seed(seed)
    for p in params:
        p.grad = torch.randn(p.shape, dtype=torch.float64, generator=g)


def test_awd_decay_follows_gradient_to_weight_ratio():
    params = _params()
    opt = AWDAdamW(params, lr=1e-2, weight_decay=0.5)
    expected_bar = 0.0
    for step in range(3):
        _set_grads(params, step)
        grad = math.sqrt(sum(float(p.grad.square().sum()) for p in params))
        weight = math.sqrt(sum(float(p.detach().square().sum()) for p in params))
        # lambda_t = lambda_awd ||g|| / ||w||, lambda_bar = 0.1 lambda_bar + 0.9 lambda_t
        expected_bar = 0.1 * expected_bar + 0.9 * 0.5 * grad / (weight + 1e-8)
        if step == 0:  # the first step equals AdamW with that decay
            reference = [p.detach().clone().requires_grad_() for p in params]
            for r, p in zip(reference, params, strict=True):
                r.grad = p.grad.clone()
            torch.optim.AdamW(reference, lr=1e-2, weight_decay=expected_bar).step()
        opt.step()
        assert opt.lambda_bar == pytest.approx(expected_bar, rel=1e-12)
        assert all(g["weight_decay"] == opt.lambda_bar for g in opt.param_groups)
        if step == 0:
            for p, r in zip(params, reference, strict=True):
                assert_close(p, r, rtol=1e-14, atol=1e-15)


def test_adadecay_per_entry_decay_by_hand():
    params = _params()
    before = [p.detach().clone() for p in params]
    _set_grads(params, 1)
    grads = [p.grad.clone() for p in params]
    lr, lam = 1e-2, 0.2
    opt = AdaDecayAdamW(params, lr=lr, weight_decay=lam)
    reference = [b.clone().requires_grad_() for b in before]
    for r, g in zip(reference, grads, strict=True):
        mag = g.abs()
        theta = 2 / (1 + torch.exp(-4 * (mag - mag.mean()) / (mag.std() + 1e-8)))
        with torch.no_grad():
            r.mul_(1 - lr * lam * theta)
        r.grad = g.clone()
    torch.optim.AdamW(reference, lr=lr, weight_decay=0.0).step()
    opt.step()
    for p, r in zip(params, reference, strict=True):
        assert_close(p, r, rtol=1e-14, atol=1e-15)
    assert all(g["weight_decay"] == lam for g in opt.param_groups)  # restored after the step
    # entries with larger gradients were decayed more: compare the decay factor directly
    big = grads[0].abs().argmax()
    small = grads[0].abs().argmin()
    adam_only = copy.deepcopy(before[0]).requires_grad_()
    adam_only.grad = grads[0].clone()
    torch.optim.AdamW([adam_only], lr=lr, weight_decay=0.0).step()
    shrink = (adam_only.detach() - params[0].detach()).abs().flatten() / before[0].abs().flatten()
    assert shrink[big] > shrink[small]


def test_state_dict_keeps_lambda_bar():
    params = _params()
    opt = AWDAdamW(params, weight_decay=0.3)
    _set_grads(params, 0)
    opt.step()
    fresh = AWDAdamW(params, weight_decay=0.3)
    fresh.load_state_dict(opt.state_dict())
    assert fresh.lambda_bar == opt.lambda_bar > 0


def test_errors():
    assert_param_error(AWDAdamW, _params(), weight_decay=-1.0, param="weight_decay")
    assert_param_error(AWDAdamW, _params(), ema=1.0, param="ema")
    assert_param_error(AdaDecayAdamW, _params(), weight_decay=float("nan"), param="weight_decay")
    assert_param_error(AdaDecayAdamW, _params(), sigmoid_scale=0.0, param="sigmoid_scale")
