r"""Training and evaluation loops of the reproduction (one annotation drawn per image and step).

Training minimises each model's ``elbo(x, y)["loss"]`` with Adam on batches of images, pairing
every image with one of its annotations drawn uniformly (as the PU-Net is trained on LIDC).
Evaluation draws ``n_samples`` masks per test image and scores them against all annotations.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from gmmflowseg.metrics import component_mode_nmi, diversity, ged, hm_iou
from paperkit import check_int, check_real, progress

__all__ = ["evaluate", "train_model"]


def train_model(
    model: torch.nn.Module,
    data: dict[str, np.ndarray],
    *,
    steps: int,
    batch_size: int = 16,
    lr: float = 1e-3,
    seed: int = 0,
    description: str = "",
) -> dict[str, Any]:
    """Adam on ``model.elbo``; returns the loss curve (every 10 steps) and the CPU seconds."""
    owner = "train_model"
    steps = check_int("steps", owner, steps, low=1, high=10**7)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=4096)
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)  # the models' reparameterisation noise
    images = torch.from_numpy(data["images"])
    masks = torch.from_numpy(data["masks"])
    N, A = masks.shape[:2]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    curve, started = [], time.process_time()
    model.train()
    for step in progress(range(steps), description, total=steps):
        idx = torch.randint(N, (batch_size,), generator=g)
        ann = torch.randint(A, (batch_size,), generator=g)
        out = model.elbo(images[idx], masks[idx, ann].long())
        opt.zero_grad(set_to_none=True)
        out["loss"].backward()
        opt.step()
        if step % 10 == 0 or step == steps - 1:
            curve.append({k: float(v.detach()) for k, v in out.items()})
    return {"curve": curve, "cpu_s": time.process_time() - started}


def evaluate(
    model: torch.nn.Module,
    data: dict[str, np.ndarray],
    *,
    n_samples: int = 16,
    seed: int = 0,
    batch_size: int = 50,
) -> dict[str, Any]:
    """Per test image GED, HM-IoU and diversity of ``n_samples`` masks against the annotations,
    and the component-mode NMI over all images; ``samples`` (N, M, H, W) bool, ``comps`` (N, M).
    """
    n_samples = check_int("n_samples", "evaluate", n_samples, low=1, high=4096)
    g = torch.Generator().manual_seed(seed)
    images = torch.from_numpy(data["images"])
    model.eval()
    samples, comps = [], []
    with torch.no_grad():
        for start in range(0, len(images), batch_size):
            logits, c = model.sample(images[start : start + batch_size], n_samples, generator=g)
            samples.append(logits.argmax(2).transpose(0, 1).numpy().astype(bool))
            comps.append(c.T.numpy())
    samples_np, comps_np = np.concatenate(samples), np.concatenate(comps)
    gts = data["masks"].astype(bool)
    per = {
        "ged": np.array([ged(s, g_) for s, g_ in zip(samples_np, gts, strict=True)]),
        "hm_iou": np.array([hm_iou(s, g_) for s, g_ in zip(samples_np, gts, strict=True)]),
        "diversity": np.array([diversity(s) for s in samples_np]),
    }
    nmi = component_mode_nmi(comps_np, samples_np, gts, data["modes"])
    return {**per, "nmi": nmi, "samples": samples_np, "comps": comps_np}
