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

import networkx as nx
import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import to_undirected

from paperkit import check_choice, param_error
from rsnn.graph import check_positive

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
    """
    owner = "make_csl"
    check_positive(num_per_class, "num_per_class", owner)
    check_positive(n, "n", owner)
    if not skips or any(not 1 < s < n - 1 for s in skips):
        raise param_error("skips", owner, f"non-empty, each skip in [2, {n - 2}]", skips)
    rng = np.random.default_rng(seed)
    out = []
    for label, s in enumerate(skips):
        base = nx.circulant_graph(n, [1, s])
        for _ in range(num_per_class):
            perm = rng.permutation(n)
            g = nx.relabel_nodes(base, dict(enumerate(perm.tolist())))
            out.append(graph_data(g, y=torch.tensor([label])))
    return out


def molecule_like(n: int, num_rings: int, rng: np.random.Generator) -> nx.Graph:
    """A random tree of maximum degree 4 on n nodes plus up to ``num_rings`` ring closures.

    Node i > 0 attaches to a uniformly random earlier node of degree < 4; each ring closure joins
    two non-adjacent nodes of degree < 4 at tree distance 4 or 5. Fewer rings are added when no
    such pair is left; the cycle rank is |E| − n + 1.
    """
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


def make_cycle_count_dataset(
    num_graphs: int, n_range: tuple[int, int] = (20, 60), seed: int = 0
) -> list[Data]:
    """Molecule-like graphs with n uniform in ``n_range`` and up to n // 8 rings.

    ``y`` (float, shape (1,)) is the cycle rank |E| − |V| + 1 (the number of independent rings).
    """
    owner = "make_cycle_count_dataset"
    check_positive(num_graphs, "num_graphs", owner)
    lo, hi = n_range
    if not 2 <= lo <= hi:
        raise param_error("n_range", owner, "a pair 2 <= lo <= hi", n_range)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(num_graphs):
        n = int(rng.integers(lo, hi + 1))
        g = molecule_like(n, int(rng.integers(0, n // 8 + 1)), rng)
        rank = g.number_of_edges() - n + 1
        out.append(graph_data(g, y=torch.tensor([float(rank)])))
    return out


def sparse_graph(family: str, n: int, seed: int = 0) -> Data:
    """One sparse connected graph of the coverage experiment.

    ``"regular3"``: a random 3-regular graph (n even); ``"er3"``: the largest component of
    G(n, p = 3 / (n − 1)), relabelled 0..n'−1; ``"molecule"``: :func:`molecule_like` with n // 8
    rings.
    """
    check_choice("family", "sparse_graph", family, FAMILIES)
    rng = np.random.default_rng(seed)
    if family == "regular3":
        g = nx.random_regular_graph(3, n, seed=seed)
    elif family == "er3":
        g = nx.gnp_random_graph(n, 3 / (n - 1), seed=seed)
        g = nx.convert_node_labels_to_integers(g.subgraph(max(nx.connected_components(g), key=len)))
    else:
        g = molecule_like(n, n // 8, rng)
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
    check_positive(num_graphs, "num_graphs", "load_nci_molecules")
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
