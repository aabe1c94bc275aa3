r"""Ablations of AD-TP's IG targets: ``python -m adtp.ablation [--quick] [--seed N] [--out DIR]``.

At the reproduction's sizes (``RUNS[quick]``, same seed, so the same data and teachers as
``adtp reproduce``), for the needle task with decoys and decoy-free:

* **precision@k of the rankings** against the true signals, on the reproduction's precision
  subset: the teacher's IG at the embeddings and at the state entering each pruning layer
  (``ig_layer="hidden"``), each ranked by :math:`\max(\mathrm{IG}, 0)` (the default target) and
  by :math:`|\mathrm{IG}|` (a signal that votes against the gold label has a negative IG), and
  accumulated attention;
* **AD-TP trained on each target**: :math:`\max(\mathrm{IG},0)` or :math:`|\mathrm{IG}|`, at the
  embeddings or per pruning layer (hidden; decoy data only), each with its own FLOPs-matched
  fixed-ratio baselines: accuracy, FLOPs reduction, AD-TP's margin over the fixed schedules on
  its own backbone, the Spearman correlation of the retainer's ratio with length and with the
  number of signals, and the precision@k of AD-TP's first predictor.

The first row of each data variant (embedding, :math:`\max(\mathrm{IG},0)`) is the
reproduction's AD-TP. Writes ``ablation.json`` into ``--out``; ``--data decoys`` or
``decoy-free`` runs one variant (two processes can then share the work); ``--precision-only``
skips the students (the full-size rankings at a fraction of the cost).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from adtp.attribution import attention_importance
from adtp.metrics import precision_at_k
from adtp.reproduce import RUNS, teacher_for, train_and_compare
from adtp.train import _ig_targets_many
from paperkit import check_choice, print_table, progress, run_dir, write_json

__all__ = ["TARGETS", "ablation", "precision_rows"]

#: The IG targets AD-TP is trained on: name -> (ig_layer, absolute).
TARGETS: dict[str, tuple[str, bool]] = {
    "max(IG,0), embedding": ("embedding", False),
    "|IG|, embedding": ("embedding", True),
    "max(IG,0), hidden": ("hidden", False),
    "|IG|, hidden": ("hidden", True),
}
#: Gauss-Legendre nodes of the ranking IG, at most (the full reproduction uses 32).
PRECISION_STEPS = 16


def precision_rows(teacher: Any, test: Any, run: dict[str, Any], data: str) -> list[dict]:
    """precision@k of the teacher's rankings on the first ``run["precision_items"]`` test rows:
    IG at the embeddings and at each pruning layer's input, by max(IG, 0) and by |IG|, and
    accumulated attention (Gauss-Legendre IG with at most :data:`PRECISION_STEPS` nodes)."""
    sub = slice(0, run["precision_items"])
    mask = test.attention_mask[sub]
    width = int(mask.sum(1).max())
    ids, mask, sig = test.input_ids[sub, :width], mask[:, :width], test.signal_mask[sub, :width]
    steps = min(run["precision_steps"], PRECISION_STEPS)
    kw = {"steps": steps, "method": "gausslegendre", "absolutes": (False, True)}
    emb = _ig_targets_many(teacher, ids, mask, test.labels[sub], ig_layer="embedding", **kw)
    hid = _ig_targets_many(teacher, ids, mask, test.labels[sub], ig_layer="hidden", **kw)
    rows = []
    for name, e, h in zip(("max(IG,0)", "|IG|"), emb, hid, strict=True):
        row = {"data": data, "ranking": f"IG {name}", "embedding": precision_at_k(e, sig, mask)}
        for k, p in enumerate(teacher.prune_layers):
            row[f"layer {p}"] = precision_at_k(h[:, k], sig, mask)
        rows.append(row)
    with torch.no_grad():
        attn = attention_importance(teacher.attention_maps(ids, mask), mask)
    rows.append(
        {"data": data, "ranking": "attention", "embedding": precision_at_k(attn, sig, mask)}
    )
    return [{k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()} for r in rows]


def _variant_row(data: str, name: str, result: dict[str, Any], precision: float) -> dict:
    rows = {r["method"]: r for r in result["rows"]}
    ours = rows["AD-TP"]
    sp = result["spearman"]
    row = {
        "data": data,
        "targets": name,
        "accuracy": ours["accuracy"],
        "teacher": rows["teacher (no pruning)"]["accuracy"],
        "flops_reduction": ours["flops_reduction"],
        "delta_acc": ours["delta_acc"],
        "delta_ci95": ours["delta_ci95"],
    }
    for score in ("ig", "attention", "random"):
        d, lo, hi = result["margins"][f"fixed {score} (AD-TP backbone)"]
        row[f"vs fixed {score}"] = f"{d:+.2f} [{lo:.2f}, {hi:.2f}]"
    row["rho_ratio_length"] = round(sp["ratio_length"][0], 3)
    row["p_ratio_length"] = float(f"{sp['ratio_length'][1]:.2g}")
    row["rho_ratio_signals"] = round(sp["ratio_signals"][0], 3)
    row["ratio_range"] = f"[{result['ratio'].min():.3f}, {result['ratio'].max():.3f}]"
    row["predictor_precision"] = round(precision, 3)
    return row


def ablation(
    *,
    quick: bool = False,
    seed: int = 0,
    data: Sequence[str] = ("decoys", "decoy-free"),
    train_students: bool = True,
    rankings: bool = True,
    ig_layers: Sequence[str] = ("embedding", "hidden"),
    on_update: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run the ablations at the sizes of ``RUNS[quick]`` on the ``data`` variants; print and
    return the two tables (``train_students=False``: the precision table only;
    ``rankings=False``: the students only; ``ig_layers``: the targets' layers, hidden on the
    decoy data only). ``on_update(tables)`` is called after every new row."""
    for value in data:
        check_choice("data", "ablation", value, ("decoys", "decoy-free"))
    for value in ig_layers:
        check_choice("ig_layers", "ablation", value, ("embedding", "hidden"))
    run = RUNS[quick]
    torch.set_num_threads(1)
    precision: list[dict] = []
    variants: list[dict] = []
    tables = {"precision_at_k": precision, "variants": variants}
    for decoys in progress([d == "decoys" for d in data], "IG-target ablations"):
        variant = "decoys" if decoys else "decoy-free"
        train, test, teacher = teacher_for(decoys, run, seed)
        if rankings:
            precision += precision_rows(teacher, test, run, variant)
            print_table(precision, title="precision@k of the teacher's rankings")
            if on_update is not None:
                on_update(tables)
        if not train_students:
            continue
        n_ig, sub = run["ig_train"], slice(0, run["ig_train"])
        layers = [la for la in ig_layers if decoys or la == "embedding"]
        for layer in layers:
            both = _ig_targets_many(
                teacher,
                train.input_ids[sub],
                train.attention_mask[sub],
                train.labels[sub],
                steps=run["ig_steps"],
                method="riemann_right",
                ig_layer=layer,
            )
            for absolute, target in zip((False, True), both, strict=True):
                targets = torch.zeros((len(train.labels), *target.shape[1:]))
                targets[:n_ig] = target
                name = next(k for k, v in TARGETS.items() if v == (layer, absolute))
                result = train_and_compare(teacher, train, test, targets, run, seed, decoys)
                psub = slice(0, run["precision_items"])
                with torch.no_grad():
                    scores = result["student"](test.input_ids[psub], test.attention_mask[psub])
                pred = precision_at_k(
                    scores["scores"][0], test.signal_mask[psub], test.attention_mask[psub]
                )
                variants.append(_variant_row(variant, name, result, pred))
                print_table(variants, title="AD-TP trained on each IG target")
                if on_update is not None:
                    on_update(tables)
    return tables


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: run, then write ``ablation.json`` (with the settings and CPU time)."""
    parser = argparse.ArgumentParser(prog="python -m adtp.ablation", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the quick run's sizes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", choices=("decoys", "decoy-free", "both"), default="both")
    only = parser.add_mutually_exclusive_group()
    only.add_argument(
        "--precision-only", action="store_true", help="the teachers' rankings only (no students)"
    )
    only.add_argument(
        "--students-only", action="store_true", help="the students only (no rankings)"
    )
    parser.add_argument("--ig-layer", choices=("embedding", "hidden", "both"), default="both")
    parser.add_argument("--out", default=None, help="run folder (default runs/adtp/ablation-*)")
    args = parser.parse_args(argv)
    folder = run_dir("adtp", args.out, kind="ablation")
    data = ("decoys", "decoy-free") if args.data == "both" else (args.data,)
    start, cpu = time.perf_counter(), time.process_time()
    students = not args.precision_only
    layers = ("embedding", "hidden") if args.ig_layer == "both" else (args.ig_layer,)
    settings = {
        "quick": args.quick,
        "seed": args.seed,
        "data": data,
        "train_students": students,
        "rankings": not args.students_only,
        "ig_layers": layers,
        **RUNS[args.quick],
    }

    def save(tables: dict[str, Any], complete: bool = False) -> None:
        doc = {
            "settings": settings,
            "tables": tables,
            "wall_s": round(time.perf_counter() - start, 1),
            "cpu_s": round(time.process_time() - cpu, 1),
            "complete": complete,
        }
        write_json(folder / "ablation.json", doc)

    tables = ablation(
        quick=args.quick,
        seed=args.seed,
        data=data,
        train_students=students,
        rankings=not args.students_only,
        ig_layers=layers,
        on_update=save,
    )
    save(tables, complete=True)
    print(f"wrote {folder / 'ablation.json'} ({time.process_time() - cpu:.1f} s CPU)")
    return 0


if __name__ == "__main__":  # pragma: no cover - the README's command
    raise SystemExit(main())
