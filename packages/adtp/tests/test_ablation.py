import pytest
import torch

import adtp.reproduce
from adtp.ablation import TARGETS, ablation, precision_rows
from adtp.data import needle_task
from adtp.model import PrunableEncoder
from adtp.reproduce import MODEL, _precision

TINY = {
    "train": 64,
    "clean_train": 48,
    "test": 40,
    "teacher_epochs": 1,
    "ig_train": 16,
    "ig_steps": 2,
    "joint_epochs": 1,
    "precision_items": 12,
    "precision_steps": 2,
    "decoy_free_adtp": False,
}


def test_precision_rows_match_the_reproduction():
    """The ablation's embedding max(IG, 0) and attention rankings are the reproduction's."""
    torch.manual_seed(0)
    teacher = PrunableEncoder(**MODEL).eval()
    test = needle_task(12, min_len=16, max_len=64, max_signals=4, seed=1)
    rows = {r["ranking"]: r for r in precision_rows(teacher, test, TINY, "decoys")}
    ref = _precision(teacher, None, test, test.labels, TINY)
    assert rows["IG max(IG,0)"]["embedding"] == round(ref["IG (teacher)"], 3)
    assert rows["attention"]["embedding"] == round(ref["attention (teacher)"], 3)
    assert set(rows["IG |IG|"]) >= {f"layer {p}" for p in MODEL["prune_layers"]}
    assert all(0 <= v <= 1 for r in rows.values() for v in r.values() if isinstance(v, float))


@pytest.mark.slow  # trains two tiny teachers and six tiny students: ~15 s of CPU
def test_ablation_default_row_is_the_reproduction(monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(adtp.reproduce.RUNS, True, TINY)
    tables = ablation(quick=True, seed=0)
    variants = tables["variants"]
    assert [r["targets"] for r in variants] == [*TARGETS, *list(TARGETS)[:2]]
    main = adtp.reproduce.run_variant(True, TINY, 0)
    ours = next(r for r in main["rows"] if r["method"] == "AD-TP")
    first = variants[0]
    assert (first["accuracy"], first["flops_reduction"]) == (
        ours["accuracy"],
        ours["flops_reduction"],
    )
    assert first["rho_ratio_length"] == round(main["spearman"]["ratio_length"][0], 3)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"data": ("decoys", "clean")}, "data"), ({"ig_layers": ("embedding", "input")}, "ig_layers")],
)
def test_ablation_refuses_unknown_variants(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ablation(quick=True, **kwargs)
