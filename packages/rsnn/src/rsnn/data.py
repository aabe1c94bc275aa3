"""Graph generators of the reproduction (nothing is downloaded).

- :func:`make_csl`: circular skip-link graphs CSL(n, s), the cycle 0–1–…–(n−1)–0 plus the chords
  i–(i+s) mod n; 4-regular, so 1-WL (and every MPNN) cannot tell the skip lengths apart: an MPNN
  is at chance (10% for the standard 10 classes), while the skip length is visible along a
  traversal. Each instance is a uniformly random relabelling of its class graph.
- :func:`molecule_like`: a random tree of maximum degree 4 (a carbon skeleton) plus k
  ring-closing edges between nodes at tree distance 4 or 5 (five- and six-membered rings).
- :func:`make_cycle_count_dataset`: molecule-like graphs with target the cycle rank
  |E| − |V| + 1, which a model can only read off when every edge is seen.
- :func:`sparse_graph`: the coverage experiment's families: random 3-regular, Erdős–Rényi with
  mean degree 3 (largest component), molecule-like.
- :func:`load_nci_molecules`: real molecules, the NCI set that ships inside RDKit
  (``rdkit/Data/NCI/first_5K.smi``), as heavy-atom graphs with element one-hot features and the
  ring count |E| − |V| + c (c fragments) as target. Needs the ``molecules`` extra (RDKit).
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import to_undirected

from paperkit import Described, check_choice, check_int, check_memory, param_error

__all__ = [
    "CSL_SKIPS",
    "ELEMENTS",
    "load_nci_molecules",
    "graph_data",
    "make_csl",
    "make_cycle_count_dataset",
    "molecule_like",
    "sparse_graph",
]

#: The skip lengths of the standard CSL benchmark (10 classes, n = 41).
CSL_SKIPS = (2, 3, 4, 5, 6, 9, 11, 12, 13, 16)
FAMILIES = ("regular3", "er3", "molecule")
#: Bytes a networkx graph and its PyG copy take per node while a generator builds it (networkx
#: keeps a dict per node and per edge: about a kilobyte per node of a sparse graph).
NODE_BYTES = 1024
#: Element one-hot of :func:`load_nci_molecules` (the last column: any other element).
ELEMENTS = ("C", "N", "O", "S", "F", "Cl", "Br", "P", "I")


def graph_data(graph: nx.Graph, **attrs) -> Data:
    """A PyG ``Data`` of a networkx graph on nodes 0..n−1: undirected ``edge_index``, ``x`` = 1."""
    n = graph.number_of_nodes()
    edges = torch.tensor(list(graph.edges()), dtype=torch.long).reshape(-1, 2).t()
    edge_index = to_undirected(edges, num_nodes=n)
    return Data(x=torch.ones(n, 1), edge_index=edge_index, num_nodes=n, **attrs)


def make_csl(
    num_per_class: int = 15,
    n: int = 41,
    skips: tuple[int, ...] = CSL_SKIPS,
    seed: int = 0,
) -> list[Data]:
    """The CSL data set: ``num_per_class`` randomly relabelled copies of CSL(n, s) per skip s.

    ``y`` is the index of s in ``skips`` (a long tensor of shape (1,)); ``x`` is all ones (N, 1).
    ``n`` >= 5 and every skip in [2, n − 2] (so each class graph is 4-regular); the data set must
    fit in memory (about 100 bytes per node of the PyG graphs).
    """
    owner = "make_csl"
    num_per_class = check_int("num_per_class", owner, num_per_class, low=1)
    n = check_int("n", owner, n, low=5)
    check_memory("n", owner, n, NODE_BYTES * n)
    skips = _check_skips(owner, skips, n)
    seed = check_int("seed", owner, seed, low=0)
    check_memory("num_per_class", owner, num_per_class, 100 * n * len(skips) * num_per_class)
    rng = np.random.default_rng(seed)
    out = []
    for label, s in enumerate(skips):
        base = nx.circulant_graph(n, [1, s])
        for _ in range(num_per_class):
            perm = rng.permutation(n)
            g = nx.relabel_nodes(base, dict(enumerate(perm.tolist())))
            out.append(graph_data(g, y=torch.tensor([label])))
    return out


def _check_skips(owner: str, skips: Any, n: int) -> tuple[int, ...]:
    """A non-empty sequence of distinct integer skips, each in [2, n − 2]."""
    expected = f"a non-empty sequence of distinct integers in [2, {n - 2}]"
    if isinstance(skips, (str, bytes)) or not hasattr(skips, "__len__"):
        raise param_error(
            "skips", owner, expected, Described(f"a {type(skips).__name__}"), cls=TypeError
        )
    values = tuple(skips)
    if not values:
        raise param_error("skips", owner, expected, values)
    for s in values:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise param_error("skips", owner, expected, values, cls=TypeError)
    if any(not 2 <= s <= n - 2 for s in values) or len(set(values)) != len(values):
        raise param_error("skips", owner, expected, values)
    return tuple(int(s) for s in values)


def molecule_like(n: int, num_rings: int, rng: np.random.Generator) -> nx.Graph:
    """A random tree of maximum degree 4 on n nodes plus up to ``num_rings`` ring closures.

    Node i > 0 attaches to a uniformly random earlier node of degree < 4; each ring closure joins
    two non-adjacent nodes of degree < 4 at tree distance 4 or 5. Fewer rings are added when no
    such pair is left; the cycle rank is |E| − n + 1. ``rng`` is a ``numpy.random.Generator``;
    the graph must fit in memory (about a kilobyte per node).
    """
    owner = "molecule_like"
    n = check_int("n", owner, n, low=1)
    check_memory("n", owner, n, NODE_BYTES * n)
    num_rings = check_int("num_rings", owner, num_rings, low=0)
    if not isinstance(rng, np.random.Generator):
        raise param_error(
            "rng",
            owner,
            "a numpy.random.Generator",
            Described(f"a {type(rng).__name__}"),
            cls=TypeError,
        )
    return _molecule_like(n, num_rings, rng)


def _molecule_like(n: int, num_rings: int, rng: np.random.Generator) -> nx.Graph:
    """:func:`molecule_like` without the checks."""
    g = nx.empty_graph(n)
    for i in range(1, n):
        free = [v for v in range(i) if g.degree(v) < 4]
        g.add_edge(i, int(rng.choice(free)))
    tree = g.copy()
    for _ in range(num_rings):
        u = int(rng.integers(n))
        if g.degree(u) >= 4:
            continue
        dist = nx.single_source_shortest_path_length(tree, u, cutoff=5)
        options = [
            v for v, d in dist.items() if d >= 4 and g.degree(v) < 4 and not g.has_edge(u, v)
        ]
        if options:
            g.add_edge(u, int(rng.choice(options)))
    return g


def _check_range(owner: str, n_range: Any) -> tuple[int, int]:
    """A pair of integers 2 <= lo <= hi."""
    expected = "a pair of integers (lo, hi) with 2 <= lo <= hi"
    if isinstance(n_range, (str, bytes)) or not hasattr(n_range, "__len__"):
        raise param_error(
            "n_range", owner, expected, Described(f"a {type(n_range).__name__}"), cls=TypeError
        )
    values = tuple(n_range)
    if len(values) != 2:
        raise param_error("n_range", owner, expected, values)
    if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in values):
        raise param_error("n_range", owner, expected, values, cls=TypeError)
    lo, hi = (int(v) for v in values)
    if not 2 <= lo <= hi:
        raise param_error("n_range", owner, expected, values)
    return lo, hi


def make_cycle_count_dataset(
    num_graphs: int, n_range: tuple[int, int] = (20, 60), seed: int = 0
) -> list[Data]:
    """Molecule-like graphs with n uniform in ``n_range`` and up to n // 8 rings.

    ``y`` (float, shape (1,)) is the cycle rank |E| − |V| + 1 (the number of independent rings).
    ``n_range`` is a pair of integers 2 <= lo <= hi; the graphs must fit in memory.
    """
    owner = "make_cycle_count_dataset"
    num_graphs = check_int("num_graphs", owner, num_graphs, low=1)
    lo, hi = _check_range(owner, n_range)
    check_memory("n_range", owner, n_range, NODE_BYTES * hi)
    seed = check_int("seed", owner, seed, low=0)
    check_memory("num_graphs", owner, num_graphs, 100 * hi * num_graphs)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(num_graphs):
        n = int(rng.integers(lo, hi + 1))
        g = _molecule_like(n, int(rng.integers(0, n // 8 + 1)), rng)
        rank = g.number_of_edges() - n + 1
        out.append(graph_data(g, y=torch.tensor([float(rank)])))
    return out


def sparse_graph(family: str, n: int, seed: int = 0) -> Data:
    """One sparse connected graph of the coverage experiment.

    ``"regular3"``: a random 3-regular graph (n even); ``"er3"``: the largest component of
    G(n, p = 3 / (n − 1)), relabelled 0..n'−1; ``"molecule"``: :func:`molecule_like` with n // 8
    rings. ``n`` >= 4 and even for ``"regular3"``, >= 2 for ``"er3"``; the graph must fit in memory.
    """
    owner = "sparse_graph"
    check_choice("family", owner, family, FAMILIES)
    smallest = {"regular3": 4, "er3": 2, "molecule": 1}[family]
    n = check_int("n", owner, n, low=smallest)
    if family == "regular3" and n % 2:
        raise param_error("n", owner, "even for a 3-regular graph", n)
    check_memory("n", owner, n, NODE_BYTES * n)
    seed = check_int("seed", owner, seed, low=0)
    rng = np.random.default_rng(seed)
    if family == "regular3":
        g = nx.random_regular_graph(3, n, seed=seed)
    elif family == "er3":
        g = nx.gnp_random_graph(n, 3 / (n - 1), seed=seed)
        g = nx.convert_node_labels_to_integers(g.subgraph(max(nx.connected_components(g), key=len)))
    else:
        g = _molecule_like(n, n // 8, rng)
    return graph_data(g)


def load_nci_molecules(
    num_graphs: int = 500, max_atoms: int = 40, min_atoms: int = 5, seed: int = 0
) -> list[Data]:
    """``num_graphs`` molecules drawn at random from RDKit's bundled NCI ``first_5K.smi``.

    Heavy atoms are nodes (``x``: one-hot over :data:`ELEMENTS` plus "other"), bonds are edges;
    molecules with fewer than ``min_atoms`` or more than ``max_atoms`` heavy atoms, or that RDKit
    cannot parse, are skipped. ``y`` (float, (1,)) is the ring count |E| − |V| + c, c the number
    of fragments (salts give several). Raises ``ImportError`` naming the extra without RDKit.
    """
    owner = "load_nci_molecules"
    num_graphs = check_int("num_graphs", owner, num_graphs, low=1)
    min_atoms = check_int("min_atoms", owner, min_atoms, low=1)
    max_atoms = check_int("max_atoms", owner, max_atoms, low=min_atoms)
    seed = check_int("seed", owner, seed, low=0)
    try:
        from rdkit import Chem, RDConfig, RDLogger
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("load_nci_molecules needs RDKit: pip install 'rsnn[molecules]'") from exc
    from pathlib import Path

    RDLogger.DisableLog("rdApp.*")
    lines = (Path(RDConfig.RDDataDir) / "NCI" / "first_5K.smi").read_text().splitlines()
    rng = np.random.default_rng(seed)
    out = []
    for i in rng.permutation(len(lines)):
        mol = Chem.MolFromSmiles(lines[i].split()[0])
        if mol is None or not min_atoms <= mol.GetNumAtoms() <= max_atoms:
            continue
        g = nx.Graph()
        g.add_nodes_from(range(mol.GetNumAtoms()))
        g.add_edges_from((b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds())
        kinds = [a.GetSymbol() for a in mol.GetAtoms()]
        x = torch.zeros(len(kinds), len(ELEMENTS) + 1)
        for v, k in enumerate(kinds):
            x[v, ELEMENTS.index(k) if k in ELEMENTS else len(ELEMENTS)] = 1.0
        rank = g.number_of_edges() - len(kinds) + nx.number_connected_components(g)
        d = graph_data(g, y=torch.tensor([float(rank)]))
        d.x = x
        out.append(d)
        if len(out) == num_graphs:
            break
    return out
