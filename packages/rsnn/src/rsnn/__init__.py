"""rsnn: random search neural networks (Ito, Koutra, Wiens, NeurIPS 2025, arXiv 2510.22520).

Random searches (randomised depth-first searches) replace the random walks of RWNNs: one search
visits every node, and O(log|V|) of them cover every edge of a sparse graph. The searches are
serialised into token sequences and read by a sequence model.

>>> import torch
>>> from rsnn import coverage, make_csl, random_dfs
>>> g = make_csl(num_per_class=1)[0]
>>> gen = torch.Generator().manual_seed(0)
>>> s = random_dfs(g.edge_index, g.num_nodes, num_searches=2, generator=gen)
>>> coverage(g.edge_index, g.num_nodes, s)["node_frac"]
1.0
"""

from rsnn.baselines import GIN
from rsnn.coverage import coverage, samples_to_cover
from rsnn.data import make_csl, make_cycle_count_dataset, molecule_like, sparse_graph
from rsnn.models import RSNN, RWNN, SequenceEncoder, pool_nodes
from rsnn.sampling import SearchBatch, random_dfs, random_walks
from rsnn.serialize import SeqBatch, anonymize, serialize

__all__ = [
    "GIN",
    "RSNN",
    "RWNN",
    "SearchBatch",
    "SeqBatch",
    "SequenceEncoder",
    "anonymize",
    "coverage",
    "make_csl",
    "make_cycle_count_dataset",
    "molecule_like",
    "pool_nodes",
    "random_dfs",
    "random_walks",
    "samples_to_cover",
    "serialize",
    "sparse_graph",
]
