"""Ablation of CBT on digits: the representatives' initialisation and the block's second half.

    python packages/cbsa/bench/ablation_digits.py [--epochs 8] [--seeds 0]

Trains CBT with the reproduction's model, data split and recipe (``cbsa.reproduce``) in three
variants: pooled representatives + ISTA (the reproduction's CBT), learned representatives + ISTA,
pooled representatives + MLP; prints the test accuracy per seed and the mean.
"""

from __future__ import annotations

import argparse
import statistics

import torch

from cbsa import CBT, digits_images
from cbsa.reproduce import DIGITS
from cbsa.train import accuracy, train_classifier

VARIANTS = {
    "pool2d + ISTA": {"rep_init": "pool2d", "ffn": "ista"},
    "learned + ISTA": {"rep_init": "learned", "ffn": "ista"},
    "pool2d + MLP": {"rep_init": "pool2d", "ffn": "mlp"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    torch.set_num_threads(1)
    X, y = digits_images(16)
    split = torch.randperm(len(X), generator=torch.Generator().manual_seed(1234))
    train, test = split[:1437], split[1437:]  # the reproduction's split
    for name, kw in VARIANTS.items():
        accs = []
        for seed in args.seeds:
            torch.manual_seed(seed)
            model = CBT(**DIGITS, attn="cbsa", **kw)
            train_classifier(model, X[train], y[train], epochs=args.epochs, seed=seed)
            accs.append(100 * accuracy(model, X[test], y[test]))
        print(
            f"| CBT, {name} | {args.epochs} | {[round(a, 2) for a in accs]} | "
            f"{statistics.fmean(accs):.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
