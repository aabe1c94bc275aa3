r"""What we tried when GraphTOP's headline claim did not hold: does the edge scorer learn anything?

``python -m graphtop.ablation scorer --data-root DIR [--seeds 3] [--first-seed 3] [--out DIR]``
    On the reproduction's cells link_pred · CSBM h=0.8 and link_pred · Cora (the quick run's
    encoders: hidden 64, 100 link-prediction steps; 200 epochs, lr 5e-3, 500 test nodes), with a
    second seed set (splits and initialisations ``first_seed ..``), compares

    * ``LinearProbe``: the rewiring frozen at the original graph (candidate weights
      :math:`m_{vu} = a_{vu}`: the unmodified subgraph);
    * ``GraphTOP``: the learned rewiring, official :math:`\lambda_e = 2, \lambda_s = 10,
      \rho^* = 0.5`;
    * ``random rewiring``: :class:`RandomRewiring`, the scorer replaced by the constant
      :math:`p_{vu} = \rho^*` (each candidate kept with probability 1/2, independently of the
      pair), the head trained exactly as GraphTOP's;
    * a small penalty grid :math:`(\lambda_e, \lambda_s) \in \{(0, 0), (2, 0), (0, 10)\}`.

    For every GraphTOP variant it measures, on the test targets' candidates, how well the learned
    :math:`p` separates the target's original edges from its non-edges (``auc_edge``) and
    same-class from other-class candidates (``auc_class``), as ROC AUCs (0.5: no separation).

``python -m graphtop.ablation official --data-root DIR --checkpoints DIR [--seeds 3] [--out DIR]``
    Cora with the authors' own pre-trained encoders (``Cora_GraphCL_GCN_1.pth`` and
    ``Cora_EdgePredGraphPrompt_GCN_1.pth`` from the official repository's ``pretrained_gnns/``,
    2-layer GCN, hidden 128) and the official downstream settings: 5 shots, 2000 random test
    nodes, batches of 50, lr 5e-4, 500 epochs, :math:`\lambda_e = 2, \lambda_s = 10`; methods
    LinearProbe, GPF-plus, GraphTOP and the random rewiring.

Each prints its tables and writes ``ablation_<experiment>.json`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scipy.stats import rankdata
from torch_geometric.data import Batch, Data

from graphtop.baselines import GPFPlus, LinearProbe
from graphtop.data import few_shot_split, load_planetoid, make_csbm
from graphtop.encoder import GCNEncoder
from graphtop.model import GraphTOP
from graphtop.pretraining import pretrain
from graphtop.reproduce import PRETRAIN_LR, PRETRAIN_STEPS
from paperkit import (
    check_choice,
    check_int,
    check_tensor,
    param_error,
    print_table,
    progress,
)

__all__ = ["RandomRewiring", "load_official_encoder", "roc_auc", "run", "scorer_auc"]

OFFICIAL_CHECKPOINTS = ("GraphCL", "EdgePredGraphPrompt")


class RandomRewiring(GraphTOP):
    """GraphTOP with its scorer replaced by the constant :math:`p_{vu} = \\rho^*`: training
    relaxes and inference samples Bernoulli(:math:`\\rho^*`) masks exactly as GraphTOP does, but
    the rewiring cannot depend on the pair (only the head learns). The ablation's null model."""

    def candidate_probs(self, batch: Batch, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cand = batch.edge_index[:, batch.cand_mask]
        u_local = cand[1, 0::2]
        p = torch.full(u_local.shape, self.target_density, dtype=h.dtype, device=h.device)
        return p, batch.batch[u_local]


def roc_auc(scores: torch.Tensor, positive: torch.Tensor) -> float:
    """ROC AUC of ``scores`` for the boolean labels ``positive`` (Mann-Whitney, ties counted
    half): :math:`(\\sum_{i \\in pos} r_i - n_+(n_+ + 1)/2) / (n_+ n_-)` with mid-ranks
    :math:`r`. NaN when either class is empty.

    >>> roc_auc(torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([False, True, False, True]))
    1.0
    """
    dims: dict = {}
    check_tensor("scores", "roc_auc", scores, shape=("n",), dims=dims)
    check_tensor("positive", "roc_auc", positive, shape=("n",), dims=dims, dtype=None)
    positive = positive.bool().cpu().numpy()
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(scores.detach().double().cpu().numpy())
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


@torch.no_grad()
def scorer_auc(model: GraphTOP, data: Data, nodes: torch.Tensor) -> dict[str, float]:
    """How the learned keep-probabilities :math:`p_{vu}` of the targets ``nodes`` rank their
    candidates: ``auc_edge`` (original edges above non-edges) and ``auc_class`` (candidates of
    the target's class above the others)."""
    owner = "scorer_auc"
    nodes = model._check_graph(data, nodes, owner, labels=False)
    h = model.node_embeddings(data, owner)
    y = data.y.to(model.device)
    ps, edge, same = [], [], []
    for batch in model._batches(data, nodes, owner):
        p, _ = model.candidate_probs(batch, h)
        cand = batch.edge_index[:, batch.cand_mask]
        target, other = batch.node_idx[cand[0, 0::2]], batch.node_idx[cand[1, 0::2]]
        ps.append(p)
        edge.append(batch.edge_weight[batch.cand_mask][0::2] > 0)
        same.append(y[target] == y[other])
    p = torch.cat(ps)
    return {"auc_edge": roc_auc(p, torch.cat(edge)), "auc_class": roc_auc(p, torch.cat(same))}


def load_official_encoder(path: str | Path) -> GCNEncoder:
    """A :class:`GCNEncoder` holding one of the official repository's checkpoints
    (``pretrained_gnns/<data>_<strategy>_GCN_1.pth``: ``conv1``, ``conv2``, both GCNConv; the
    widths are read from the weights)."""
    if not Path(path).is_file():
        raise param_error("path", "load_official_encoder", "an existing checkpoint file", path)
    state = torch.load(path, map_location="cpu", weights_only=True)
    hidden, in_dim = state["conv1.lin.weight"].shape
    out_dim = state["conv2.lin.weight"].shape[0]
    encoder = GCNEncoder(in_dim, hidden, out_dim)
    rename = {"conv1.": "convs.0.", "conv2.": "convs.1."}
    encoder.load_state_dict({rename[k[:6]] + k[6:]: v for k, v in state.items()}, strict=True)
    return encoder


#: The variants of the ``scorer`` experiment (name -> constructor with the encoder's arguments).
SCORER_VARIANTS: dict[str, Callable[..., Any]] = {
    "LinearProbe (original graph)": LinearProbe,
    "GraphTOP": GraphTOP,
    "random rewiring p=rho*": RandomRewiring,
    "GraphTOP lambda_e=0 lambda_s=0": partial(GraphTOP, lambda_ent=0.0, lambda_sparse=0.0),
    "GraphTOP lambda_e=2 lambda_s=0": partial(GraphTOP, lambda_ent=2.0, lambda_sparse=0.0),
    "GraphTOP lambda_e=0 lambda_s=10": partial(GraphTOP, lambda_ent=0.0, lambda_sparse=10.0),
}
OFFICIAL_VARIANTS: dict[str, Callable[..., Any]] = {
    "LinearProbe (original graph)": LinearProbe,
    "GPF-plus": GPFPlus,
    "GraphTOP": GraphTOP,
    "random rewiring p=rho*": RandomRewiring,
}


def run_cell(
    data: Data,
    encoder: GCNEncoder,
    variants: dict[str, Callable[..., Any]],
    seeds: Sequence[int],
    *,
    shots: int,
    num_test: int,
    epochs: int,
    lr: float,
    label: str = "",
) -> dict[str, dict[str, list[float]]]:
    """Per variant, per seed: test accuracy, and for GraphTOP variants the rewiring statistics
    (hard Bernoulli draws on the test targets) and the scorer AUCs."""
    num_classes = int(data.y.max()) + 1
    out: dict[str, dict[str, list[float]]] = {name: {} for name in variants}
    for seed in progress(seeds, label):
        train, test = few_shot_split(data.y, shots, num_test, seed=seed)
        for name, cls in variants.items():
            model = cls(encoder, num_classes, hidden=encoder.out_dim)
            model.fit(data, train, epochs=epochs, lr=lr, seed=seed)
            row = {"acc": float((model.predict(data, test) == data.y[test]).float().mean())}
            if isinstance(model, GraphTOP):
                row |= model.rewiring_stats(data, test, mode="sample")
                if not isinstance(model, RandomRewiring):
                    row |= scorer_auc(model, data, test)
            for key, value in row.items():
                out[name].setdefault(key, []).append(value)
    return out


def _table(cells: dict[str, dict[str, dict[str, list[float]]]]) -> list[dict[str, Any]]:
    rows = []
    for cell, variants in cells.items():
        for name, metrics in variants.items():
            row: dict[str, Any] = {"cell": cell, "variant": name}
            for key, values in metrics.items():
                a = np.asarray(values)
                row[key] = f"{a.mean():.3f} ± {a.std():.3f}" if key == "acc" else round(a.mean(), 3)
            rows.append(row)
    return rows


def run(
    experiment: str,
    *,
    data_root: str | Path,
    out: str | Path,
    checkpoints: str | Path | None = None,
    seeds: int = 3,
    first_seed: int = 0,
    epochs: int | None = None,
    num_test: int | None = None,
) -> dict[str, Any]:
    """Run ``experiment`` (``"scorer"`` or ``"official"``, see the module docstring), print its
    table and write ``ablation_<experiment>.json``; ``epochs`` and ``num_test`` override the
    settings (the tests use them to stay small)."""
    check_choice("experiment", "run", experiment, ("scorer", "official"))
    seeds = check_int("seeds", "run", seeds, low=1)
    first_seed = check_int("first_seed", "run", first_seed, low=0)
    if experiment == "official" and checkpoints is None:
        raise param_error(
            "checkpoints", "run", "the folder of the official checkpoints (--checkpoints DIR)", None
        )
    start, cpu = time.perf_counter(), time.process_time()
    run_seeds = list(range(first_seed, first_seed + seeds))
    cora = load_planetoid(data_root, "Cora")
    cells: dict[str, dict[str, dict[str, list[float]]]] = {}
    if experiment == "scorer":
        settings = {"epochs": epochs or 200, "lr": 5e-3, "num_test": num_test or 500, "hidden": 64}
        graphs = {"CSBM h=0.8": make_csbm(2000, 4, 64, 8.0, 0.8, 0.3, seed=0), "Cora": cora}
        for gname, data in graphs.items():
            torch.manual_seed(0)
            encoder = GCNEncoder(data.num_features, 64, 64)
            pretrain(encoder, data, "link_pred", PRETRAIN_STEPS["link_pred"], 0, lr=PRETRAIN_LR)
            cells[f"link_pred · {gname}"] = run_cell(
                data,
                encoder,
                SCORER_VARIANTS,
                run_seeds,
                shots=5,
                **_fit_args(settings),
                label=gname,
            )
    else:
        settings = {
            "epochs": epochs or 500,
            "lr": 5e-4,
            "num_test": num_test or 2000,
            "hidden": 128,
        }
        for name in OFFICIAL_CHECKPOINTS:
            encoder = load_official_encoder(Path(checkpoints) / f"Cora_{name}_GCN_1.pth")
            cells[f"official {name} · Cora"] = run_cell(
                cora,
                encoder,
                OFFICIAL_VARIANTS,
                run_seeds,
                shots=5,
                **_fit_args(settings),
                label=name,
            )
    table = _table(cells)
    print_table(table, title=f"{experiment}: mean over seeds {run_seeds}")
    result = {
        "experiment": experiment,
        "seeds": run_seeds,
        "settings": settings,
        "cells": cells,
        "table": table,
        "seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu,
    }
    print(f"wall {result['seconds']:.0f} s, CPU {result['cpu_seconds']:.0f} s")
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / f"ablation_{experiment}.json").write_text(json.dumps(result, indent=1))
    return result


def _fit_args(settings: dict[str, Any]) -> dict[str, Any]:
    return {k: settings[k] for k in ("epochs", "lr", "num_test")}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphtop.ablation", description=__doc__)
    parser.add_argument("experiment", choices=["scorer", "official"])
    parser.add_argument("--data-root", required=True, help="a folder holding Cora/raw")
    parser.add_argument("--checkpoints", help="the official pretrained_gnns/ folder")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--out", default="runs/graphtop/ablation")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    run(
        args.experiment,
        data_root=args.data_root,
        out=args.out,
        checkpoints=args.checkpoints,
        seeds=args.seeds,
        first_seed=args.first_seed,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
