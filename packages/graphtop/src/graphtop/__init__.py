"""GraphTOP: topology-oriented prompting for a frozen pre-trained GNN.

NeurIPS 2025, arXiv 2510.22451.

For every target node, a learned edge scorer re-decides which nodes of its k-hop subgraph it is
connected to; the discrete choice is relaxed with a binary-concrete sample whose temperature is
annealed, an entropy penalty makes the relaxation tight and a sparsity penalty keeps the rewired
subgraph from becoming dense. Only the scorer and a linear head are trained.
"""

from graphtop.baselines import GPF, EdgePromptLite, FineTune, GPFPlus, LinearProbe
from graphtop.data import few_shot_split, load_karate_club, load_planetoid, make_csbm
from graphtop.encoder import GCNEncoder
from graphtop.model import GraphTOP
from graphtop.pretrain import info_nce, pretrain
from graphtop.prompt import TopologyPrompt
from graphtop.relaxation import entropy_loss, relax_edges, sparsity_loss, tau_schedule
from graphtop.subgraphs import build_target_subgraphs, num_candidates

__all__ = [
    "GPF",
    "EdgePromptLite",
    "FineTune",
    "GCNEncoder",
    "GPFPlus",
    "GraphTOP",
    "LinearProbe",
    "TopologyPrompt",
    "build_target_subgraphs",
    "entropy_loss",
    "few_shot_split",
    "info_nce",
    "load_karate_club",
    "load_planetoid",
    "make_csbm",
    "num_candidates",
    "pretrain",
    "relax_edges",
    "sparsity_loss",
    "tau_schedule",
]
