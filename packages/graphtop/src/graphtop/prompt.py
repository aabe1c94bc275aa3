r"""The topology prompt: an edge scorer over (target, candidate) pairs.

.. math::
    p_{vu} = \sigma\!\left(\frac{g_\phi(H_v + H_u)}{t}\right), \qquad
    g_\phi(h) = W_2\,\mathrm{ReLU}(W_1 h + b_1) + b_2,

with :math:`H = f_\theta(X, E)` the frozen encoder's node embeddings on the original graph, Xavier
uniform :math:`W_1, W_2` and a fixed sharpening temperature :math:`t` (0.2 in the paper's code).
"""

from __future__ import annotations

import torch
from torch import nn

from paperkit import Described, check_int, check_real, check_tensor, param_error

__all__ = ["TopologyPrompt"]


class TopologyPrompt(nn.Module):
    """The edge scorer :math:`g_\\phi` (MLP ``hidden -> hidden -> 1``) and its sigmoid.

    ``forward(h_target, h_cand) -> p``, the probability of keeping each candidate edge.
    ``temperature`` is a finite positive number.

    Shapes:
        h_target, h_cand: ``(M, hidden)`` in the scorer's dtype, finite (NaN and inf refused;
        ``M = 0`` gives an empty ``p``); p: ``(M,)``.

    >>> TopologyPrompt(4)(torch.randn(3, 4), torch.randn(3, 4)).shape
    torch.Size([3])
    """

    def __init__(self, hidden: int, temperature: float = 0.2):
        super().__init__()
        owner = "TopologyPrompt"
        hidden = check_int("hidden", owner, hidden, low=1)
        self.temperature = check_real("temperature", owner, temperature, low=0, low_open=True)
        self.fc1 = nn.Linear(hidden, hidden)
        self.fc2 = nn.Linear(hidden, 1)
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Xavier-uniform weights (the official initialisation), PyTorch's default biases."""
        for layer in (self.fc1, self.fc2):
            nn.init.xavier_uniform_(layer.weight, generator=generator)
            bound = 1.0 / layer.in_features**0.5
            nn.init.uniform_(layer.bias, -bound, bound, generator=generator)

    def forward(self, h_target: torch.Tensor, h_cand: torch.Tensor) -> torch.Tensor:
        weight = self.fc1.weight
        owner = "TopologyPrompt.forward"
        for name, h in (("h_target", h_target), ("h_cand", h_cand)):
            check_tensor(
                name,
                owner,
                h,
                shape=(None, weight.shape[1]),
                dtype=weight.dtype,
                device=weight.device,
                nonempty=False,
            )
        if len(h_cand) != len(h_target):
            raise param_error(
                "h_cand",
                owner,
                f"a tensor with as many rows as 'h_target' ({len(h_target)})",
                Described(f"{len(h_cand)} rows"),
            )
        score = self.fc2(torch.relu(self.fc1(h_target + h_cand))).squeeze(-1)
        return torch.sigmoid(score / self.temperature)
