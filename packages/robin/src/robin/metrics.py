"""Rollout error (ROBIN Sec. 4, metrics)."""

from __future__ import annotations

import torch

from paperkit import check_tensor

__all__ = ["rollout_rmse"]


def rollout_rmse(pred: torch.Tensor, true: torch.Tensor) -> dict[str, float]:
    r"""Displacement (= position) RMSE of a rollout: ``rmse_all`` :math:`=
    \sqrt{\mathrm{mean}_{t,n,d}(\hat u - u)^2}` over every step of ``pred`` (T, N, D), and
    ``rmse_last`` over the last step only."""
    dims: dict = {}
    check_tensor("pred", "rollout_rmse", pred, shape=("T", "N", "D"), dims=dims)
    check_tensor("true", "rollout_rmse", true, shape=("T", "N", "D"), dims=dims)
    err = (pred.double() - true.double()) ** 2
    return {"rmse_all": float(err.mean().sqrt()), "rmse_last": float(err[-1].mean().sqrt())}
