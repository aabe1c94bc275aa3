import torch

from shadowopacity.losses import (
    SeparationLoss,
    decorrelation_loss,
    invariance_loss,
    opacity_loss,
    rank_loss,
    sobel,
)


def test_decorrelation_zero_for_uncorrelated_channels():
    # Walsh patterns: +-1 sequences of length 8 with zero mean, pairwise orthogonal
    h = torch.tensor([[1.0]])
    for _ in range(3):
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)])
    P = h[1:4].reshape(3, 1, 2, 4).transpose(0, 1)  # noqa: N806
    O = h[4:8].reshape(4, 1, 2, 4).transpose(0, 1)  # noqa: N806, E741
    assert decorrelation_loss(P, O) < 1e-10
    assert decorrelation_loss(P, torch.cat([P, O], 1)) > 0.05  # shared channels are penalised


def test_rank_zero_when_ordering_holds_with_margin():
    mask = torch.ones(2, 1, 4, 4)
    o = torch.zeros(2, 1, 4, 4)
    s = torch.tensor([1.5, 0.5])
    aug = torch.stack([torch.full((1, 4, 4), 0.06), torch.full((1, 4, 4), -0.06)])
    assert rank_loss(o, aug, mask, s) == 0
    assert rank_loss(o, -aug, mask, s) > 0.1
    assert rank_loss(o, -aug, mask, torch.tensor([1.01, 0.99])) == 0  # |s - 1| < 0.05 skipped


def test_invariance_stops_gradient_on_augmented_view():
    P = torch.randn(2, 3, 4, 4, requires_grad=True)  # noqa: N806
    Pa = torch.randn(2, 3, 4, 4, requires_grad=True)  # noqa: N806
    invariance_loss(P, Pa).backward()
    assert P.grad.abs().sum() > 0 and Pa.grad is None


def test_opacity_loss_uses_sobel_gradient():
    a = torch.zeros(1, 1, 8, 8)
    a[..., 4:] = 1.0
    assert sobel(a).abs().sum() > 0 and opacity_loss(a, a) == 0
    shifted = torch.roll(a, 1, dims=-1)
    assert opacity_loss(shifted, a, w_grad=0.5) > opacity_loss(shifted, a, w_grad=0.0)


def test_weights_switch_terms_off():
    torch.manual_seed(0)
    out = {
        "alpha": torch.rand(2, 1, 8, 8),
        "pos_logit": torch.randn(2, 1, 8, 8),
        "op_logit": torch.randn(2, 1, 8, 8),
        "P": torch.randn(2, 4, 8, 8),
        "O": torch.randn(2, 4, 8, 8),
    }
    aug = {k: v + 0.3 for k, v in out.items()}
    aug["alpha"] = aug["alpha"].clamp(0, 1)
    alpha = torch.rand(2, 1, 8, 8)
    s = torch.tensor([1.4, 0.6])
    full = SeparationLoss()(out, alpha, aug, alpha, s)
    assert all(full[k] > 0 for k in ("alpha", "pos", "inv", "dec"))
    none = SeparationLoss(w_pos=0, w_inv=0, w_rank=0, w_dec=0)(out, alpha, aug, alpha, s)
    assert torch.allclose(none["total"], none["alpha"])
    unpaired = SeparationLoss()(out, alpha)
    assert unpaired["inv"] == 0 and unpaired["rank"] == 0
