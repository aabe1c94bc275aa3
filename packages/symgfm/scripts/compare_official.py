"""Compare symgfm with the official code (benfinkelshtein/EquivarianceEverywhere) on the same
inputs: one two-stream layer (``models/equiv_layer.py`` with its Triton mean aggregation, run by
Triton's CPU interpreter, ``TRITON_INTERPRET=1``; the code's ``triton_on=False`` path fails in its
constructor) with the same weights and maps, and the ridge maps (``transforms/least_squares.py``)
at a fixed lambda.

Usage: ``TRITON_INTERPRET=1 uv run python packages/symgfm/scripts/compare_official.py PATH``
(``PATH``: a checkout of the official repository).
The official code imports ``torch_scatter``; a stand-in backed by ``torch_geometric.utils.scatter``
is installed in ``sys.modules`` for this script only.
"""

from __future__ import annotations

import sys
import time
import types

import torch
from torch_geometric.utils import scatter

from symgfm import TSLayer, csbm_graph, prepare_graph, ridge_ls


def _official(path: str):
    sys.modules["torch_scatter"] = types.SimpleNamespace(scatter=scatter)
    torch.cuda.set_device = lambda device: None  # the kernel launcher selects a CUDA device
    sys.path.insert(0, path)
    from helpers.gnn_type import GNNType
    from models.equiv_layer import EquivLayer
    from transforms.least_squares import solve_ls_with_bias_cv

    return EquivLayer, GNNType, solve_ls_with_bias_cv


def _copy(ours, theirs) -> None:
    with torch.no_grad():
        theirs.aggr_lin.weight.copy_(ours.w_aggr.T)
        theirs.self_lin.weight.copy_(ours.w_self.T)


def main(path: str) -> None:
    EquivLayer, GNNType, solve = _official(path)
    torch.manual_seed(0)
    g = csbm_graph(120, 24, 4, 0.6, seed=1, train_per_class=10)
    g.x = g.x.double()
    p = prepare_graph(g, g.train_mask)
    # ridge maps at a fixed lambda: theirs solves [A 1; lam I] by lstsq (gelss)
    A, B = p.x_norm[p.train_mask], p.y0[p.train_mask]
    worst = 0.0
    for lam in (1e-8, 1e-4, 1e-2):
        w_t, b_t = solve(A.cpu(), B.cpu(), lambdas=[lam])
        w_o, b_o = ridge_ls(A, B, lambdas=(lam,))
        worst = max(worst, float((w_t - w_o).abs().max()), float((b_t - b_o).abs().max()))
    print(f"ridge maps, lambda in (1e-8, 1e-4, 1e-2): max |W - W_official| = {worst:.2e}")
    # one layer, k_in=3 -> k_out=5, L=1, with our maps renamed to the official keys
    ours = TSLayer(3, 5, ls_num_layers=1).double()
    theirs = EquivLayer(3, 5, ls_num_layers=1, triton_on=True, gnn_type=GNNType.MEAN_GNN).double()
    for s, t in (("phi", "x"), ("psi", "y")):
        _copy(getattr(ours, f"{s}1"), getattr(theirs, f"{t}_self"))
        _copy(getattr(ours, f"{s}2"), getattr(theirs, f"{t}_aggr"))
        _copy(getattr(ours, f"{s}3"), getattr(theirs, f"pool2{t}"))
        for layer in range(2):
            _copy(getattr(ours, f"{s}4")[layer], getattr(theirs, f"ls2{t}_layers")[layer])
        _copy(getattr(ours, f"{s}5")[0], getattr(theirs, f"ls2{t}_hetero_layers")[1])
    conv = {}
    for key, (w, b) in p.conversions.items():
        name = key.replace("_het", "_hetero")
        conv[f"{name}_w"], conv[f"{name}_b"] = w, b
    n = g.num_nodes
    x = torch.randn(n, 24, 3, dtype=torch.float64)
    y = torch.randn(n, 4, 3, dtype=torch.float64)
    src, dst = p.edge_index  # CSR over targets: rowptr, and the sources as column indices
    order = torch.argsort(dst, stable=True)
    rowptr = torch.cat(
        [torch.zeros(1, dtype=torch.long), torch.bincount(dst, minlength=n).cumsum(0)]
    )
    indices = src[order]
    with torch.no_grad():
        t0 = time.perf_counter()
        xo, yo = ours(x, y, p.conversions, p.edge_index)
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        xt, yt = theirs(x, y, conv, device="cpu", rowptr=rowptr, indices=indices)
        t_theirs = time.perf_counter() - t0
    dx, dy = float((xo - xt).abs().max()), float((yo - yt).abs().max())
    print(
        f"TS layer (N={n}, F=24, C=4, k 3->5, L=1): max |x' diff| = {dx:.2e}, "
        f"max |y' diff| = {dy:.2e} (scale {float(xo.abs().max()):.2f}, {float(yo.abs().max()):.2f})"
    )
    print(
        f"one forward: symgfm {1e3 * t_ours:.1f} ms, "
        f"official (Triton interpreter) {1e3 * t_theirs:.1f} ms"
    )


if __name__ == "__main__":
    main(sys.argv[1])
