"""Why CSL is not learned: the token format against CRaWl's structural window features.

``python -m rsnn.csl_study [--folds 2] [--epochs 40] [--window 8] [--seeds 0]``

CSL's ten classes are 4-regular circulant graphs C_41(1, k) that differ only in the skip length
k. The default token format encodes a search's tree edges and, for every token, anonymised ids
of the node and its predecessor; a model must then infer k from tree shapes or from comparing
learned id embeddings. CRaWl (Tönshoff et al., 2023) adds, for each token, whether the node
equals or is adjacent to each of the s previous nodes (:func:`rsnn.tokens.window_features`),
which shows the non-tree edges of a search and the short cycles of a walk directly.

This study trains RSNN and RWNN (walks of |V| steps) with the default format (s = 0) and with
the window features (s = ``--window``), at m ∈ {1, 4} sequences per graph, everything else as
the reproduction's CSL experiment (1-D CNN of width 32, Adam 3e-3 with cosine decay, the same
epochs for every model), on ``--folds`` of CSL's stratified 5-fold splits for each seed. It
prints the mean test accuracy and the spread over (seed, fold) runs, and writes them as JSON
with ``--out``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import StratifiedKFold

from paperkit import check_int, print_table, progress
from rsnn.data import make_csl
from rsnn.models import RSNN, RWNN
from rsnn.training import fit

__all__ = ["csl_window_study"]


def csl_window_study(
    *,
    folds: int = 2,
    epochs: int = 40,
    window: int = 8,
    ms: tuple[int, ...] = (1, 4),
    seeds: tuple[int, ...] = (0,),
    hidden: int = 32,
) -> list[dict]:
    """Rows (method, s, m) with the mean and std of CSL test accuracy over seeds × folds."""
    owner = "csl_window_study"
    folds = check_int("folds", owner, folds, low=1, high=5)
    epochs = check_int("epochs", owner, epochs, low=1)
    window = check_int("window", owner, window, low=1)
    hidden = check_int("hidden", owner, hidden, low=1)
    ms = tuple(check_int("ms", owner, m, low=1) for m in ms)
    seeds = tuple(check_int("seeds", owner, seed, low=0) for seed in seeds)
    graphs = make_csl()
    labels = np.array([int(g.y) for g in graphs])
    in_dim = graphs[0].x.size(1)
    runs = [(meth, s, m) for s in (0, window) for meth in ("RSNN", "RWNN") for m in ms]
    acc: dict[tuple, list[float]] = {r: [] for r in runs}
    loss: dict[tuple, list[float]] = {r: [] for r in runs}
    for seed in seeds:
        splits = StratifiedKFold(5, shuffle=True, random_state=seed).split(labels, labels)
        for fold, (tr, te) in enumerate(splits):
            if fold >= folds:
                break
            train, test = [graphs[i] for i in tr], [graphs[i] for i in te]
            for meth, s, m in progress(runs, f"CSL seed {seed} fold {fold}"):
                torch.manual_seed(seed)
                cls = RSNN if meth == "RSNN" else RWNN
                model = cls(in_dim, hidden=hidden, out_dim=10, seq_model="cnn", window=s)
                res = fit(model, train, test, task="classification", epochs=epochs, m=m, seed=seed)
                acc[(meth, s, m)].append(res.metric)
                loss[(meth, s, m)].append(res.losses[-1])
    return [
        {
            "method": meth,
            "window s": s,
            "m": m,
            "accuracy": float(np.mean(acc[(meth, s, m)])),
            "std": float(np.std(acc[(meth, s, m)])),
            "final train loss": float(np.mean(loss[(meth, s, m)])),
            "runs": len(acc[(meth, s, m)]),
        }
        for meth, s, m in runs
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m rsnn.csl_study", description=__doc__)
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    rows = csl_window_study(
        folds=args.folds, epochs=args.epochs, window=args.window, seeds=tuple(args.seeds)
    )
    print_table(rows, title="CSL test accuracy: tree-only tokens (s = 0) vs window features")
    if args.out is not None:
        args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
