"""Is ZeroS's MQAR gap to softmax our error? Seeds and learning rates, one command:
``python -m zeros.robustness``.

The reproduction's MQAR result (ZeroS well below softmax) is one seed at one learning rate, the
rate that suits softmax. This reruns the full run's task (T = 32, 4 pairs, 1,500 steps) for
ZeroS and softmax on two more seeds, and ZeroS alone at a lower and a higher learning rate, and
prints the recall accuracies.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from paperkit import check_int, print_table
from zeros.reproduce import MQAR_TASK, Setting, train_mqar

__all__ = ["robustness"]

#: (model, seed, learning rate) of each run.
RUNS = (
    ("ZeroS", 1, 3e-3),
    ("softmax", 1, 3e-3),
    ("ZeroS", 2, 3e-3),
    ("softmax", 2, 3e-3),
    ("ZeroS", 0, 1e-3),
    ("ZeroS", 0, 1e-2),
)
_ATTN = {"ZeroS": "zeros", "softmax": "softmax"}


def robustness(steps: int = 1500) -> list[dict[str, Any]]:
    """One row per run of :data:`RUNS`: model, seed, learning rate, recall accuracy."""
    steps = check_int("steps", "robustness", steps, low=1)
    rows = []
    for model, seed, lr in RUNS:
        task = {**MQAR_TASK, "lr": lr}
        found = train_mqar(Setting(model, _ATTN[model]), steps=steps, seed=seed, **task)
        rows.append(
            {"model": model, "seed": seed, "lr": lr, "steps": steps, "accuracy": found["accuracy"]}
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    steps = int(args[0]) if args else 1500
    print_table(robustness(steps), title="MQAR (T=32, 4 pairs): seeds and learning rates")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
