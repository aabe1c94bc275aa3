import json
import math

import numpy as np
import pytest
import torch
from rich.console import Console

from paperkit.report import (
    figure,
    markdown_table,
    print_table,
    progress,
    run_dir,
    save_figure,
    to_jsonable,
    write_json,
)


def test_run_dir_layout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = run_dir("zeros")
    b = run_dir("zeros")
    assert a.resolve().parent == b.resolve().parent == (tmp_path / "runs" / "zeros").resolve()
    assert a != b and a.is_dir() and b.is_dir()
    assert run_dir("zeros", kind="bench").name.startswith("bench-")
    explicit = run_dir("zeros", tmp_path / "given" / "deep")
    assert explicit == tmp_path / "given" / "deep" and explicit.is_dir()


def test_to_jsonable_converts_numeric_types():
    data = {
        "a": np.float32(1.5),
        "b": torch.tensor([1.0, 2.0]),
        "c": np.arange(3),
        "d": (math.nan, math.inf, -math.inf),
        1: None,
    }
    assert to_jsonable(data) == {
        "a": 1.5,
        "b": [1.0, 2.0],
        "c": [0, 1, 2],
        "d": ["nan", "inf", "-inf"],
        "1": None,
    }
    with pytest.raises(TypeError, match="Cannot write object to JSON"):
        to_jsonable(object())


def test_write_json_round_trip(tmp_path):
    path = write_json(tmp_path / "sub" / "results.json", {"mse": np.float64(0.25)})
    assert json.loads(path.read_text()) == {"mse": 0.25}


def test_figure_is_saved_as_png(tmp_path):
    fig, ax = figure()
    ax.plot([0, 1], [0, 1])
    path = save_figure(fig, tmp_path / "plot.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig, axes = figure(1, 2)
    assert axes.shape == (1, 2)


def test_tables():
    rows = [{"model": "zeros", "mse": 0.012345}, {"model": "softmax", "mse": 0.5, "note": "x"}]
    console = Console(record=True, width=80)
    table = print_table(rows, title="contrast", console=console)
    text = console.export_text()
    assert "contrast" in text and "0.01235" in text and "softmax" in text
    assert [c.header for c in table.columns] == ["model", "mse", "note"]
    assert markdown_table(rows).splitlines() == [
        "| model | mse | note |",
        "|---|---|---|",
        "| zeros | 0.01235 |  |",
        "| softmax | 0.5 | x |",
    ]


def test_progress_yields_everything(monkeypatch):
    assert list(progress(range(5), "work")) == [0, 1, 2, 3, 4]
    assert list(progress(iter("abc"), total=3, disable=True)) == ["a", "b", "c"]
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    assert list(progress(range(3))) == [0, 1, 2]
