"""Is DartQuant's tie with QuaRot our error? Paired seeds, the Whip loss's normalisation, GPTQ.

``python -m dartquant.seed_study [--seeds 10] [--train-steps 1000] [--out FILE]``

On the full reproduction's model (LlamaForCausalLM d=64 trained 1000 steps, channel outliers
injected, 32 calibration windows, 40k validation characters), for rotation seeds 0..S-1:

- ``QuaRot``: random Hadamard R1 and R2 of that seed;
- ``DartQuant``: Whip + QR-Orth calibration **started from the same random Hadamards**, so the
  paired difference DartQuant − QuaRot at one seed is the effect of the calibration alone;
- ``DartQuant raw``: the same on raw activations (``normalize="none"``, as the official code);
- ``QuaRot GPTQ`` / ``DartQuant GPTQ``: GPTQ weights instead of RTN (the paper's tables use
  GPTQ weights for W4A4KV4).

It prints the W4A4KV4 perplexity of each variant (mean, std, range over seeds), the paired
difference against QuaRot with the same weight quantiser, the number of seeds on which the
variant is better, and the rank correlation between DartQuant's final R1 Whip loss and its
perplexity across seeds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from dartquant.model import perplexity
from dartquant.recipe import pipeline
from dartquant.reproduce import build_setting
from paperkit import check_int, print_table, progress

__all__ = ["VARIANTS", "seed_study"]

#: label -> (method, paired QuaRot label, pipeline options)
VARIANTS = {
    "QuaRot": ("quarot", None, {}),
    "DartQuant": ("dartquant", "QuaRot", {}),
    "DartQuant raw": ("dartquant", "QuaRot", {"normalize": "none"}),
    "QuaRot GPTQ": ("quarot", None, {"weight_quant": "gptq"}),
    "DartQuant GPTQ": ("dartquant", "QuaRot GPTQ", {"weight_quant": "gptq"}),
}


def seed_study(
    seeds: int = 10, train_steps: int = 1000, n_chars: int = 400_000, val_chars: int = 40_000
) -> tuple[list[dict], dict]:
    """Rows per variant (W4A4KV4 perplexity over ``seeds`` rotation seeds, paired differences)
    and the per-seed values."""
    owner = "seed_study"
    seeds = check_int("seeds", owner, seeds, low=1)
    train_steps = check_int("train_steps", owner, train_steps, low=1)
    n_chars = check_int("n_chars", owner, n_chars, low=1)
    val_chars = check_int("val_chars", owner, val_chars, low=1)
    model, _, calib, val = build_setting(0, train_steps, n_chars, val_chars)
    fp = perplexity(model, val)
    ppl: dict[str, list[float]] = {k: [] for k in VARIANTS}
    whip: list[float] = []
    for s in progress(range(seeds), "rotation seeds"):
        for label, (method, _, opts) in VARIANTS.items():
            res = pipeline(model, calib, method, seed=s, **opts)
            ppl[label].append(perplexity(res.model, val))
            if label == "DartQuant":
                whip.append(float(res.info["r1_whip"][1]))
    rows = []
    for label, (_, paired, _) in VARIANTS.items():
        v = np.array(ppl[label])
        row = {
            "variant": label,
            "W4A4KV4 ppl": float(v.mean()),
            "std": float(v.std()),
            "range": f"{v.min():.3g}-{v.max():.3g}",
        }
        if paired is not None:
            diff = v - np.array(ppl[paired])
            row |= {
                "minus paired QuaRot": float(diff.mean()),
                "diff std": float(diff.std()),
                "seeds better": f"{int((diff < 0).sum())}/{len(diff)}",
            }
        rows.append(row)
    rho = spearmanr(whip, ppl["DartQuant"]).statistic
    return rows, {"fp_ppl": fp, "per_seed": ppl, "r1_whip_final": whip, "spearman_whip_ppl": rho}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m dartquant.seed_study", description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--train-steps", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    rows, extra = seed_study(args.seeds, args.train_steps)
    print_table(
        rows,
        title=f"W4A4KV4 perplexity over {args.seeds} rotation seeds (FP: {extra['fp_ppl']:.3f})",
    )
    print(f"Spearman(final R1 Whip loss, DartQuant ppl) = {extra['spearman_whip_ppl']:.3f}")
    if args.out is not None:
        args.out.write_text(json.dumps({"rows": rows, **extra}, indent=2))


if __name__ == "__main__":
    main()
