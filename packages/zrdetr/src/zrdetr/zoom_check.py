"""Diagnostic of the zoom module (paper Sec. 3, zoom embedding): ``python -m zrdetr.zoom_check``.

Trains the +zoom ablation of the reproduction (MLP head, zoom embedding, no relation module; the
full run's data, seed and 500 steps) and evaluates it on the three test sets twice, with the
zoom the regressor predicts and with the true zoom, next to the regressor's mean absolute error
in log-zoom. It separates "the predicted zoom is wrong" from "the zoom embedding does not
extrapolate".
"""

from __future__ import annotations

import time

import torch

from paperkit import print_table
from zrdetr.model import ZRDETR
from zrdetr.reproduce import SETS, K, _data
from zrdetr.train import detections, evaluate, fit_prior, predict, train_detector

__all__ = ["zoom_check"]


def zoom_check(seed: int = 0, steps: int = 500, n_boot: int = 50) -> list[dict]:
    """Rows of (test set, log-zoom MAE, mAP50 with the predicted zoom, with the true zoom)."""
    cpu = time.process_time()
    data = _data(seed, 1200, 300)
    prior = fit_prior(data["train"], K)
    torch.manual_seed(seed * 100 + 1)  # the +zoom model's initialisation in the reproduction
    model = ZRDETR(K, use_zoom=True, use_relation=False, head="mlp")
    train_detector(model, data["train"], steps=steps, prior=prior, seed=seed, label="+zoom")
    rows = []
    for name in SETS:
        d = data[name]
        row: dict = {"test set": name}
        for mode, zoom in (("predicted", None), ("true", d["zoom"])):
            out = predict(model, d["images"], zoom)
            row["log-zoom MAE"] = float((out["log_zoom"] - d["zoom"].log()).abs().mean())
            e = evaluate(detections(out, K, None, lam=0.0), d, n_boot=n_boot, seed=seed)
            lo, hi = e["mAP50 CI"]
            row[f"mAP50, {mode} zoom"] = f"{e['mAP50']:.3f} [{lo:.3f}, {hi:.3f}]"
        rows.append(row)
    print_table(rows, title=f"+zoom, {steps} steps, seed {seed}: predicted vs true zoom")
    print(f"CPU seconds: {time.process_time() - cpu:.1f}")
    return rows


if __name__ == "__main__":
    zoom_check()
