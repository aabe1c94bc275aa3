import torch

from shadowopacity.losses import SeparationLoss
from shadowopacity.model import BinaryShadowNet, DirectOpacityNet, OpacityShadowNet


def test_outputs_shapes_range_finite():
    torch.manual_seed(0)
    net = OpacityShadowNet(base=4, d_branch=8)
    out = net(torch.rand(2, 3, 16, 16))
    assert out["alpha"].shape == (2, 1, 16, 16) and out["P"].shape == (2, 8, 16, 16)
    assert out["O"].shape == (2, 8, 16, 16) and out["pos_logit"].shape == (2, 1, 16, 16)
    assert out["alpha"].min() >= 0 and out["alpha"].max() <= 1
    assert all(torch.isfinite(v.float()).all() for v in out.values())
    # alpha = sigmoid(pos) * sigmoid(head_a): never above the position probability
    assert (out["alpha"] <= torch.sigmoid(out["pos_logit"]) + 1e-7).all()


def test_gradient_reaches_both_branches():
    torch.manual_seed(0)
    net = OpacityShadowNet(base=4, d_branch=8)
    x = torch.rand(2, 3, 16, 16)
    out, out_aug = net(x), net(x * 0.9)
    alpha = torch.rand(2, 1, 16, 16)
    SeparationLoss()(out, alpha, out_aug, alpha * 0.5, torch.tensor([0.5, 0.5]))["total"].backward()
    for branch in (net.branch_pos, net.branch_op, net.head_a, net.head_o):
        weights = [p for p in branch.parameters() if p.dim() > 1]  # head_o's bias cancels in
        assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in weights)  # L_rank


def test_baselines_share_backbone_and_run_under_autocast():
    torch.manual_seed(0)
    x = torch.rand(2, 3, 16, 16)
    for cls in (BinaryShadowNet, DirectOpacityNet):
        net = cls(base=4)
        assert sum(p.numel() for p in net.encoder.parameters()) == sum(
            p.numel() for p in OpacityShadowNet(base=4).encoder.parameters()
        )
        out = net(x)
        assert out["alpha"].shape == (2, 1, 16, 16) and out["mask"].dtype == torch.bool
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = OpacityShadowNet(base=4, d_branch=8)(x)
    assert torch.isfinite(out["alpha"].float()).all()
