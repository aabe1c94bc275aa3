"""Run and report helpers: a results folder per run, JSON, figures, tables and progress bars.

A reproduction writes everything it produces into one folder::

    out = run_dir("zeros")                       # runs/zeros/20261130-101500/
    for step in progress(range(400), "training"):
        ...
    print_table(rows, title="contrast task")
    save_figure(fig, out / "contrast.png")
    write_json(out / "results.json", {"rows": rows})
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import json
import math
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "figure",
    "markdown_table",
    "print_table",
    "progress",
    "run_dir",
    "save_figure",
    "to_jsonable",
    "write_json",
]

T = TypeVar("T")


def run_dir(package: str, out: str | os.PathLike | None = None, *, kind: str = "") -> Path:
    """Create and return the folder a run writes to.

    ``out`` is used as given when set; otherwise ``runs/<package>/<kind-><timestamp>`` under the
    current directory (a numeric suffix keeps two runs in the same second apart).
    """
    if out is not None:
        path = Path(out)
        path.mkdir(parents=True, exist_ok=True)
        return path
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path("runs") / package / (f"{kind}-{stamp}" if kind else stamp)
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    path.mkdir(parents=True)
    return path


def to_jsonable(obj: Any) -> Any:
    """Convert numpy/torch values, dataclasses and paths into plain JSON types.

    Non-finite floats become the strings ``"nan"``, ``"inf"``, ``"-inf"`` so the file stays
    valid JSON for every reader.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(dataclasses.asdict(obj))
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "detach") and hasattr(obj, "cpu"):  # a torch tensor
        obj = obj.detach().cpu().numpy()
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"Cannot write {type(obj).__name__} to JSON: {obj!r}")


def write_json(path: str | os.PathLike, data: Any) -> Path:
    """Write ``data`` (after :func:`to_jsonable`) as indented JSON, atomically (a temporary file
    in the same folder, then a rename), so an interrupted write never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(to_jsonable(data), indent=2, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def figure(nrows: int = 1, ncols: int = 1, *, size: tuple[float, float] | None = None):
    """A matplotlib figure and its axes, drawn off-screen (no display or pyplot state needed)."""
    from matplotlib.figure import Figure

    size = size or (4.5 * ncols, 3.5 * nrows)
    fig = Figure(figsize=size, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes if axes.size > 1 else axes[0, 0]


def save_figure(fig: Any, path: str | os.PathLike, *, dpi: int = 120) -> Path:
    """Save a matplotlib figure as PNG (or the format the suffix names); return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path


def _cell(value: Any, floatfmt: str) -> str:
    if isinstance(value, (float, np.floating)):
        return format(float(value), floatfmt)
    return str(value)


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    return columns


def print_table(
    rows: Sequence[Mapping[str, Any]],
    *,
    title: str | None = None,
    floatfmt: str = ".4g",
    console: Any = None,
) -> Any:
    """Print rows (dicts sharing keys) as a rich table; return the ``rich.table.Table``."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    columns = _columns(rows)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(_cell(row.get(c, ""), floatfmt) for c in columns))
    if console is None:
        console = Console()
        if not console.is_terminal:  # logs and pipes: do not squeeze wide tables into 80 columns
            console = Console(width=200)
    console.print(table)
    return table


def markdown_table(rows: Sequence[Mapping[str, Any]], *, floatfmt: str = ".4g") -> str:
    """Rows as a GitHub-flavoured markdown table (for pasting measured results into a README)."""
    columns = _columns(rows)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += [
        "| " + " | ".join(_cell(row.get(c, ""), floatfmt) for c in columns) + " |" for row in rows
    ]
    return "\n".join(lines)


def progress(
    iterable: Iterable[T],
    description: str = "",
    *,
    total: int | None = None,
    disable: bool | None = None,
) -> Iterator[T]:
    """Iterate with a rich progress bar (off when ``PAPERKIT_NO_PROGRESS=1`` or ``disable``)."""
    from rich.progress import track

    if disable is None:
        disable = os.environ.get("PAPERKIT_NO_PROGRESS", "0") == "1"
    if disable:
        yield from iterable
        return
    yield from track(iterable, description=description, total=total, transient=True)
