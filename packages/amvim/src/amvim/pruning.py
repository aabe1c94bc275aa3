r"""Training-free token reduction (AMVim's evaluation protocol, abstract).

After each layer l in ``layers`` (l blocks done) the L patch tokens of the sequence are scored,
the top :math:`k = \lceil \rho L \rceil` are kept and the others dropped; no weight changes and
no retraining. Survivors keep their original (row, column) coordinates and their relative
(raster) order, so the next blocks rebuild their scan orders from those coordinates. A class
token is never dropped. Scores:

* ``"norm"``: :math:`\lVert x_i \rVert_2`, the L2 norm of the block output (keep the largest);
* ``"mean_sim"``: :math:`-\cos(x_i, \bar x)` with :math:`\bar x` the mean token (keep the tokens
  least like the mean, i.e. drop the redundant ones);
* ``"random"``: uniform scores from a generator seeded by ``seed`` and the layer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from paperkit import check_bool, check_choice, check_int, check_real, check_tensor, param_error

__all__ = ["SCORES", "TokenPruner"]

SCORES = ("norm", "mean_sim", "random")


class TokenPruner:
    r"""Keep the top :math:`\lceil \rho L\rceil` tokens after each of ``layers`` (training-free).

    Args:
        layers: the layers after which to prune (l >= 1: after l blocks), e.g. ``(2, 4)`` for
            depth 6 (the default of the models' protocol, depth/3 and 2·depth/3).
        keep_ratio: :math:`\rho \in (0, 1]` of the current tokens kept at each pruning layer
            (so ρ² of the patch tokens remain after two layers); ρ = 1 changes nothing.
        score: ``"norm"``, ``"mean_sim"`` or ``"random"``.
        seed: the seed of the ``"random"`` score.

    Passed to a model as ``model(x, pruner=...)``; :meth:`prune` is what the model calls.
    NaN policy: NaN or inf in the tokens is refused (ValueError).

    >>> import torch
    >>> pruner = TokenPruner(layers=[2], keep_ratio=0.5)
    >>> x = torch.arange(4.0).reshape(1, 4, 1)
    >>> coords = torch.tensor([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> kept, where = pruner.prune(x, coords)
    >>> kept.flatten().tolist(), where[0].tolist()
    ([2.0, 3.0], [[1, 0], [1, 1]])
    >>> pruner.lengths(64, depth=6)
    [64, 64, 32, 32, 32, 32]
    """

    def __init__(
        self,
        layers: Sequence[int],
        keep_ratio: float,
        score: str = "norm",
        seed: int = 0,
    ) -> None:
        owner = "TokenPruner"
        if isinstance(layers, (str, bytes)) or not isinstance(layers, Sequence) or not layers:
            raise param_error(
                "layers", owner, "a non-empty sequence of integers", layers, cls=TypeError
            )
        self.layers = tuple(
            sorted({check_int("layers", owner, layer, low=1, high=10_000) for layer in layers})
        )
        self.keep_ratio = check_real("keep_ratio", owner, keep_ratio, low=0, high=1, low_open=True)
        self.score = check_choice("score", owner, score, SCORES)
        self.seed = check_int("seed", owner, seed, low=0, high=2**63 - 1)

    def __repr__(self) -> str:
        return (
            f"TokenPruner(layers={list(self.layers)}, keep_ratio={self.keep_ratio}, "
            f"score={self.score!r})"
        )

    def kept(self, L: int) -> int:
        r""":math:`\lceil \rho L \rceil` (at least 1), the tokens kept out of L."""
        return max(1, math.ceil(round(self.keep_ratio * L, 9)))

    def lengths(self, L: int, depth: int) -> list[int]:
        """The number of patch tokens each of ``depth`` blocks sees, starting from L."""
        out, n = [], L
        for i in range(depth):
            out.append(n)
            if i + 1 in self.layers:
                n = self.kept(n)
        return out

    def scores(self, x: torch.Tensor, layer: int) -> torch.Tensor:
        """Scores (B, L) of the patch tokens x (B, L, D); the top ones are kept."""
        if self.score == "norm":
            return x.float().norm(dim=-1)
        if self.score == "mean_sim":
            mean = x.float().mean(dim=1, keepdim=True)
            return -F.cosine_similarity(x.float(), mean, dim=-1)
        g = torch.Generator().manual_seed(self.seed * 10_007 + layer)
        return torch.rand(x.shape[:2], generator=g).to(x.device)

    def prune(
        self, x: torch.Tensor, coords: torch.Tensor, middle_cls: bool = False, layer: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Keep the top tokens of x (B, L, D) (B, L+1, D with ``middle_cls``: the class token
        last, always kept) at coords (L, 2) or (B, L, 2); returns the survivors in their order
        and their coordinates (B, k, 2). ``layer`` seeds the ``"random"`` score."""
        owner = "TokenPruner.prune"
        check_tensor("x", owner, x, ndim=3)
        middle_cls = check_bool("middle_cls", owner, middle_cls)
        check_tensor("coords", owner, coords, ndim=(2, 3), dtype="int", device=x.device)
        L = x.shape[1] - int(middle_cls)
        if coords.shape[-1] != 2 or coords.shape[-2] != L or L < 1:
            raise param_error(
                "coords", owner, f"of shape (L, 2) or (B, L, 2) with L = {L}", tuple(coords.shape)
            )
        if coords.ndim == 3 and coords.shape[0] != x.shape[0]:
            raise param_error("coords", owner, f"of batch size {x.shape[0]}", coords.shape[0])
        if int(coords.min()) < 0:
            raise param_error("coords", owner, "non-negative (row, column) pairs", "negatives")
        layer = check_int("layer", owner, layer, low=0)
        coords = coords.expand(x.shape[0], L, 2) if coords.ndim == 2 else coords
        if self.keep_ratio == 1.0:
            return x, coords
        patches = x[:, :L]
        keep = self.scores(patches, layer).topk(self.kept(L), dim=1).indices.sort(dim=1).values
        kept = patches.gather(1, keep[..., None].expand(-1, -1, x.shape[-1]))
        if middle_cls:
            kept = torch.cat([kept, x[:, L:]], dim=1)
        return kept, coords.gather(1, keep[..., None].expand(-1, -1, 2))
