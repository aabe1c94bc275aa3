"""Compare :class:`bcvlr.VQEmbeddingEMA` and :func:`bcvlr.contrastive_loss` with the released
BCV-LR code (``liuxin0824/BCV-LR-discrete``, ``models.py``: ``VQEmbeddingEMA`` and ``Proto``) on
the same inputs.

The released ``models.py`` imports Procgen-side modules (``config``, ``data_loader``, ``utils``,
``tensordict``, ``funcy``), so only the two classes are loaded from it: their source is read from
the checkout and executed unmodified with ``torch``, ``nn``, ``F`` and a stub ``config`` module in
scope. Both quantisers start from the same codebook (the released one's uniform draw) and the
same EMA statistics; the contrastive heads share the predictor and the bilinear ``W``. Checks:
the quantised output, the indices, the commitment loss and the perplexity in evaluation mode;
the same after ten training-mode steps (EMA codebook updates); the straight-through gradient;
the contrastive loss and its gradient; CPU time of an evaluation-mode forward (batch 256).
Usage::

    uv run python packages/bcvlr/bench/compare_official.py PATH/TO/BCV-LR-discrete
"""

from __future__ import annotations

import ast
import sys
import time
import types
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from bcvlr import VQEmbeddingEMA, contrastive_loss


def _load_classes(root: Path, names: tuple[str, ...]) -> dict[str, type]:
    """Execute the class definitions ``names`` of the released ``models.py``."""
    source = (root / "models.py").read_text()
    tree = ast.parse(source)
    body = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in names]
    utils = types.SimpleNamespace(weight_init=lambda m: None)  # weights are copied in below
    scope = {"torch": torch, "nn": nn, "F": F, "config": types.SimpleNamespace(VQConfig=object)}
    scope["utils"] = utils
    exec(compile(ast.Module(body=body, type_ignores=[]), str(root / "models.py"), "exec"), scope)
    return {n: scope[n] for n in names}


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.detach().double() - b.detach().double()).abs().max())


def compare_vq(official: type, steps: int = 10, seed: int = 0) -> dict[str, float]:
    """Evaluation- and training-mode agreement of the quantisers (paper defaults: 2 codebooks,
    64 codes of width 16, 4 latents, commitment 0.05, decay 0.999)."""
    cfg = types.SimpleNamespace(
        num_codebooks=2,
        num_embs=64,
        emb_dim=16,
        num_discrete_latents=4,
        commitment_cost=0.05,
        decay=0.999,
    )
    torch.manual_seed(seed)
    ref = official(cfg)
    ours = VQEmbeddingEMA(2, 64, 16, 4, commitment=0.05, decay=0.999)
    ours.embedding.copy_(ref.embedding)
    ours.ema_weight.copy_(ref.ema_weight)
    ours.ema_count.copy_(ref.ema_count)
    ours.initialised.fill_(True)  # skip the data-dependent start (a listed deviation)
    x = torch.randn(256, 128) * 0.1
    diffs: dict[str, float] = {}
    for mode in ("eval", "train"):
        for m in (ref, ours):
            m.train(mode == "train")
        for _ in range(steps if mode == "train" else 1):
            xr = x.clone().requires_grad_(True)
            xo = x.clone().requires_grad_(True)
            zr, lr_, pr, ir = ref(xr)
            zo, lo, po, io = ours(xo)
            x = x + 0.05 * torch.randn_like(x)
        diffs[f"{mode}: z_q"] = _max_diff(zr, zo)
        diffs[f"{mode}: loss"] = abs(lr_.item() - lo.item())
        diffs[f"{mode}: perplexity"] = abs(pr.item() - po.item())
        diffs[f"{mode}: indices differ"] = float(
            (ir.reshape(256, 2, 4) != io).sum()  # released layout (B, N, L, 1)
        )
        diffs[f"{mode}: codebook"] = _max_diff(ref.embedding, ours.embedding)
    g = torch.randn_like(zr)
    (gr,) = torch.autograd.grad((zr * g).sum() + lr_, xr)
    (go,) = torch.autograd.grad((zo * g).sum() + lo, xo)
    diffs["gradient w.r.t. x"] = _max_diff(gr, go)
    for name, m in (("released", ref), ("ours", ours)):
        m.eval()
        with torch.no_grad():
            start = time.process_time()
            for _ in range(200):
                m(x)
        diffs[f"eval forward CPU ms ({name})"] = (time.process_time() - start) / 200 * 1e3
    return diffs


def compare_contrastive(official: type, seed: int = 0) -> dict[str, float]:
    """The released ``Proto`` loss vs :func:`contrastive_loss` with the same predictor and
    ``W`` (projection 256, predictor hidden 512, batch 512)."""
    torch.manual_seed(seed)
    ref = official(256, 512)
    for m in ref.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.05)
    z, zt = torch.randn(512, 256), torch.randn(512, 256)
    loss_ref = ref(z, zt)
    loss_ours = contrastive_loss(z, zt, ref.predictor, ref.protos)
    params = list(ref.parameters())
    g_ref = torch.autograd.grad(loss_ref, params)
    g_ours = torch.autograd.grad(loss_ours, params)
    return {
        "loss": abs(loss_ref.item() - loss_ours.item()),
        "gradient": max(_max_diff(a, b) for a, b in zip(g_ref, g_ours, strict=True)),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    classes = _load_classes(Path(argv[0]), ("VQEmbeddingEMA", "Proto"))
    start = time.process_time()
    rows = {
        **{f"VQ {k}": v for k, v in compare_vq(classes["VQEmbeddingEMA"]).items()},
        **{f"contrastive {k}": v for k, v in compare_contrastive(classes["Proto"]).items()},
    }
    for k, v in rows.items():
        print(f"{k:40s} {v:.3g}")
    print(f"CPU s: {time.process_time() - start:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
