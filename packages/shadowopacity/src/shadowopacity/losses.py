"""The training losses of the paper's Sec. 3 (SFS and OMP), each a function, and
:class:`SeparationLoss`, their weighted sum with every weight ablatable:

    L = L_alpha + w_pos L_pos + w_inv L_inv + w_rank L_rank + w_dec L_dec,
    defaults w = (1.0, 0.1, 0.1, 0.01).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import check_real, check_tensor
from shadowopacity.physics import T_MASK

__all__ = [
    "SeparationLoss",
    "decorrelation_loss",
    "invariance_loss",
    "opacity_loss",
    "position_loss",
    "rank_loss",
    "sobel",
]

_SOBEL_X = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]) / 8.0


def sobel(x: torch.Tensor) -> torch.Tensor:
    """Sobel gradients (d/dx, d/dy) of a ``(B, 1, H, W)`` map, replicate padding.

    Returns ``(B, 2, H, W)``; each kernel is the 3x3 Sobel operator divided by 8."""
    x = check_tensor("x", "sobel", x, shape=(None, 1, None, None))
    k = torch.stack([_SOBEL_X, _SOBEL_X.T])[:, None].to(x)
    return F.conv2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), k)


def _maps(owner: str, **maps: torch.Tensor) -> list[torch.Tensor]:
    dims: dict = {}
    return [check_tensor(k, owner, v, shape=("B", 1, "H", "W"), dims=dims) for k, v in maps.items()]


def opacity_loss(alpha_hat: torch.Tensor, alpha: torch.Tensor, w_grad: float = 0.5) -> torch.Tensor:
    """OMP loss: ``L1(alpha_hat, alpha) + w_grad * L1(sobel(alpha_hat), sobel(alpha))``
    (the gradient term keeps the penumbra sharp); maps ``(B, 1, H, W)``."""
    alpha_hat, alpha = _maps("opacity_loss", alpha_hat=alpha_hat, alpha=alpha)
    w_grad = check_real("w_grad", "opacity_loss", w_grad, low=0.0)
    return (alpha_hat - alpha).abs().mean() + w_grad * (
        sobel(alpha_hat) - sobel(alpha)
    ).abs().mean()


def position_loss(pos_logit: torch.Tensor, mask: torch.Tensor, eps: float = 1.0) -> torch.Tensor:
    """L_pos: binary cross-entropy of ``sigmoid(pos_logit)`` against the position mask plus the
    soft Dice loss ``1 - (2 sum p m + eps) / (sum p + sum m + eps)`` (per image, averaged)."""
    pos_logit, mask = _maps("position_loss", pos_logit=pos_logit, mask=mask)
    eps = check_real("eps", "position_loss", eps, low=0.0, low_open=True)
    bce = F.binary_cross_entropy_with_logits(pos_logit, mask)
    p = torch.sigmoid(pos_logit)
    inter = (p * mask).sum(dim=(1, 2, 3))
    dice = 1.0 - (2.0 * inter + eps) / (p.sum(dim=(1, 2, 3)) + mask.sum(dim=(1, 2, 3)) + eps)
    return bce + dice.mean()


def invariance_loss(P: torch.Tensor, P_aug: torch.Tensor) -> torch.Tensor:  # noqa: N803
    """L_inv: ``mean ||P(I) - sg(P(I'))||^2``: the position features must not move when only the
    opacity changes (sg: stop-gradient on the augmented view)."""
    dims: dict = {}
    P = check_tensor("P", "invariance_loss", P, shape=("B", "C", "H", "W"), dims=dims)  # noqa: N806
    P_aug = check_tensor("P_aug", "invariance_loss", P_aug, shape=("B", "C", "H", "W"), dims=dims)  # noqa: N806
    return (P - P_aug.detach()).pow(2).mean()


def rank_loss(
    op_logit: torch.Tensor,
    op_logit_aug: torch.Tensor,
    mask: torch.Tensor,
    s: torch.Tensor,
    margin: float = 0.05,
) -> torch.Tensor:
    """L_rank: with o = mean of ``head_o(O)`` over the shadow region ``mask``,
    ``max(0, margin - sign(s - 1) (o(I') - o(I)))``, averaged over the images with
    ``|s - 1| >= 0.05`` and a non-empty region (0 when there are none)."""
    owner = "rank_loss"
    op_logit, op_logit_aug, mask = _maps(
        owner, op_logit=op_logit, op_logit_aug=op_logit_aug, mask=mask
    )
    s = check_tensor("s", owner, s, shape=(op_logit.shape[0],))
    margin = check_real("margin", owner, margin, low=0.0)
    area = mask.sum(dim=(1, 2, 3))
    o = (op_logit * mask).sum(dim=(1, 2, 3)) / area.clamp_min(1.0)
    o_aug = (op_logit_aug * mask).sum(dim=(1, 2, 3)) / area.clamp_min(1.0)
    use = ((s - 1.0).abs() >= 0.05) & (area > 0)
    hinge = F.relu(margin - torch.sign(s - 1.0) * (o_aug - o))
    return (hinge * use).sum() / use.sum().clamp_min(1)


def decorrelation_loss(P: torch.Tensor, O: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:  # noqa: N803, E741
    """L_dec: ``||C||_F^2 / d^2`` with C the (d x d) cross-correlation of the channels of P and O,
    each standardised over all pixels of the batch (a Barlow-style penalty between branches)."""
    dims: dict = {}
    P = check_tensor("P", "decorrelation_loss", P, shape=("B", None, "H", "W"), dims=dims)  # noqa: N806
    O = check_tensor("O", "decorrelation_loss", O, shape=("B", None, "H", "W"), dims=dims)  # noqa: N806, E741
    eps = check_real("eps", "decorrelation_loss", eps, low=0.0, low_open=True)
    O = O.to(P.dtype)  # noqa: N806, E741
    d_p, d_o = P.shape[1], O.shape[1]
    p = P.transpose(0, 1).reshape(d_p, -1)
    o = O.transpose(0, 1).reshape(d_o, -1)
    p = (p - p.mean(1, keepdim=True)) / (p.std(1, unbiased=False, keepdim=True) + eps)
    o = (o - o.mean(1, keepdim=True)) / (o.std(1, unbiased=False, keepdim=True) + eps)
    c = p @ o.T / p.shape[1]
    return c.pow(2).sum() / (d_p * d_o)


class SeparationLoss(nn.Module):
    """The total loss of the full model (weights ablatable; 0 switches a term off).

    ``forward(out, alpha, out_aug=None, alpha_aug=None, s=None)``: ``out``/``out_aug`` are the
    model's outputs on I and on its SOA re-rendering I'; ``alpha``/``alpha_aug`` their targets;
    ``s`` the SOA scales. L_inv and L_rank need the pair and are 0 without it. Returns a dict with
    ``total`` and each term (``alpha``, ``pos``, ``inv``, ``rank``, ``dec``).
    """

    def __init__(
        self,
        w_pos: float = 1.0,
        w_inv: float = 0.1,
        w_rank: float = 0.1,
        w_dec: float = 0.01,
        w_grad: float = 0.5,
        margin: float = 0.05,
    ) -> None:
        super().__init__()
        owner = "SeparationLoss"
        self.w_pos = check_real("w_pos", owner, w_pos, low=0.0)
        self.w_inv = check_real("w_inv", owner, w_inv, low=0.0)
        self.w_rank = check_real("w_rank", owner, w_rank, low=0.0)
        self.w_dec = check_real("w_dec", owner, w_dec, low=0.0)
        self.w_grad = check_real("w_grad", owner, w_grad, low=0.0)
        self.margin = check_real("margin", owner, margin, low=0.0)

    def forward(
        self,
        out: dict[str, torch.Tensor],
        alpha: torch.Tensor,
        out_aug: dict[str, torch.Tensor] | None = None,
        alpha_aug: torch.Tensor | None = None,
        s: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor]:
        owner = "SeparationLoss"
        if not isinstance(out, dict) or not {"alpha", "pos_logit", "P", "O"} <= set(out):
            raise TypeError(
                f"The 'out' parameter of {owner} must be the dict of OpacityShadowNet.forward. "
                f"Got {type(out).__name__} instead."
            )
        alpha = check_tensor("alpha", owner, alpha, shape=tuple(out["alpha"].shape))
        paired = out_aug is not None
        if paired and (alpha_aug is None or s is None):
            raise ValueError(
                f"The 'alpha_aug' and 's' parameters of {owner} must be given with 'out_aug'. "
                "Got None instead."
            )
        mask = (alpha > T_MASK).to(alpha.dtype)
        terms = {
            "alpha": opacity_loss(out["alpha"], alpha, self.w_grad),
            "pos": position_loss(out["pos_logit"], mask),
        }
        zero = alpha.new_zeros(())
        P, O = out["P"], out["O"]  # noqa: E741, N806
        if paired:
            alpha_aug = check_tensor("alpha_aug", owner, alpha_aug, shape=tuple(alpha.shape))
            s = check_tensor("s", owner, s, shape=(alpha.shape[0],))
            mask_aug = (alpha_aug > T_MASK).to(alpha.dtype)
            terms["alpha"] = 0.5 * (
                terms["alpha"] + opacity_loss(out_aug["alpha"], alpha_aug, self.w_grad)
            )
            terms["pos"] = 0.5 * (terms["pos"] + position_loss(out_aug["pos_logit"], mask_aug))
            terms["inv"] = invariance_loss(P, out_aug["P"]) if self.w_inv else zero
            terms["rank"] = (
                rank_loss(out["op_logit"], out_aug["op_logit"], mask, s, self.margin)
                if self.w_rank
                else zero
            )
            P, O = torch.cat([P, out_aug["P"]]), torch.cat([O, out_aug["O"]])  # noqa: E741, N806
        else:
            terms["inv"] = terms["rank"] = zero
        terms["dec"] = decorrelation_loss(P, O) if self.w_dec else zero
        terms["total"] = (
            terms["alpha"]
            + self.w_pos * terms["pos"]
            + self.w_inv * terms["inv"]
            + self.w_rank * terms["rank"]
            + self.w_dec * terms["dec"]
        )
        return terms
