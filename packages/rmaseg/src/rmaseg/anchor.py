"""The authors' ``rankseg`` package (PyPI), an optional test and benchmark dependency."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import torch

__all__ = ["anchor_available", "anchor_rule"]


def anchor_available() -> bool:
    """Whether ``rankseg`` can be imported."""
    return importlib.util.find_spec("rankseg") is not None


def anchor_rule(
    metric: str, solver: str, output_mode: str = "multilabel", pruning_prob: float = 0.5
) -> Callable[[torch.Tensor], torch.Tensor]:
    """``rankseg.RankSEG(metric, solver=solver, output_mode, pruning_prob).predict``."""
    from rankseg import RankSEG

    return RankSEG(
        metric=metric, solver=solver, output_mode=output_mode, pruning_prob=pruning_prob
    ).predict
