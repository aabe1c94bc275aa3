"""rsnn: random search neural networks (Ito, Koutra, Wiens, NeurIPS 2025, arXiv 2510.22520).

Random searches (randomised depth-first searches) replace the random walks of RWNNs: one search
visits every node, and O(log|V|) of them cover every edge of a sparse graph. The searches are
serialised into token sequences and read by a sequence model.

Names are imported on first use, so ``import rsnn`` (and the ``rsnn`` command) load neither
torch nor torch_geometric until a name is used.

>>> import torch
>>> from rsnn import coverage, make_csl, random_dfs
>>> g = make_csl(num_per_class=1)[0]
>>> gen = torch.Generator().manual_seed(0)
>>> s = random_dfs(g.edge_index, g.num_nodes, num_searches=2, generator=gen)
>>> coverage(g.edge_index, g.num_nodes, s)["node_frac"]
1.0
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "GIN": "baselines",
        "coverage": "covering",
        "samples_to_cover": "covering",
        "make_csl": "data",
        "make_cycle_count_dataset": "data",
        "molecule_like": "data",
        "sparse_graph": "data",
        "RSNN": "models",
        "RWNN": "models",
        "SequenceEncoder": "models",
        "pool_nodes": "models",
        "SearchBatch": "sampling",
        "random_dfs": "sampling",
        "random_walks": "sampling",
        "SeqBatch": "tokens",
        "anonymize": "tokens",
        "serialize": "tokens",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from rsnn.baselines import GIN as GIN
    from rsnn.covering import coverage as coverage
    from rsnn.covering import samples_to_cover as samples_to_cover
    from rsnn.data import make_csl as make_csl
    from rsnn.data import make_cycle_count_dataset as make_cycle_count_dataset
    from rsnn.data import molecule_like as molecule_like
    from rsnn.data import sparse_graph as sparse_graph
    from rsnn.models import RSNN as RSNN
    from rsnn.models import RWNN as RWNN
    from rsnn.models import SequenceEncoder as SequenceEncoder
    from rsnn.models import pool_nodes as pool_nodes
    from rsnn.sampling import SearchBatch as SearchBatch
    from rsnn.sampling import random_dfs as random_dfs
    from rsnn.sampling import random_walks as random_walks
    from rsnn.tokens import SeqBatch as SeqBatch
    from rsnn.tokens import anonymize as anonymize
    from rsnn.tokens import serialize as serialize
