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

from graphtop._checks import check_positive_float, check_positive_int

__all__ = ["TopologyPrompt"]


class TopologyPrompt(nn.Module):
    """The edge scorer :math:`g_\\phi` (MLP ``hidden -> hidden -> 1``) and its sigmoid.

    ``forward(h_target: (M, d), h_cand: (M, d)) -> p: (M,)``, the probability of keeping each
    candidate edge.
    """

    def __init__(self, hidden: int, temperature: float = 0.2):
        super().__init__()
        check_positive_int(hidden, "hidden", "TopologyPrompt")
        self.temperature = check_positive_float(temperature, "temperature", "TopologyPrompt")
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
        score = self.fc2(torch.relu(self.fc1(h_target + h_cand))).squeeze(-1)
        return torch.sigmoid(score / self.temperature)
