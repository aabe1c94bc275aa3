"""The ``papers`` command, and the ``<pkg> reproduce|bench`` command every package exposes.

    papers list [--markdown] [--runs DIR]
    papers report [--runs DIR] [--markdown]
    papers reproduce NAME [--quick] [--seed N] [--out DIR] [--data-root DIR]
    papers bench NAME [--quick] [--device auto|cpu|cuda|cuda:N] [--out DIR]

A package's own command is one line in its ``cli.py``::

    def main(argv=None):
        return package_main(PAPER, argv)

A run writes ``results.json`` (``bench.json``) into its folder, atomically, following the schema
of :mod:`paperkit.results`. An interrupted run (Ctrl-C) leaves no folder when nothing was
written yet, or a folder holding ``INCOMPLETE``; ``papers report`` skips it.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from rich.console import Console

from paperkit.errors import param_error
from paperkit.registry import Paper, UnknownPaperError, discover, get_paper
from paperkit.report import markdown_table, print_table, run_dir, write_json
from paperkit.results import SCHEMA_VERSION, Report, environment, git_commit, now
from paperkit.seeding import seed_everything

__all__ = [
    "Command",
    "catalog_markdown",
    "latest_results",
    "package_main",
    "papers_main",
    "report_rows",
    "run_bench",
    "run_reproduce",
]

_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")


def package_version(name: str) -> str | None:
    """The installed version of a member (distribution ``neurips25-<name>``, else ``<name>``)."""
    for dist in (f"neurips25-{name}", name):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _envelope(
    paper: Paper, kind: str, report: Report, folder: Path, wall: float, **fields: Any
) -> dict:
    body = report.to_dict(folder)
    doc = {
        "schema": f"paperkit.{'results' if kind == 'reproduce' else 'bench'}/{SCHEMA_VERSION}",
        "kind": kind,
        "package": paper.name,
        "version": package_version(paper.name),
        "paper": {"title": paper.title, "arxiv": paper.arxiv},
        "commit": git_commit(_source_folder(paper)),
        "created": now(),
        **fields,
        **body,
        "wall_s": round(wall, 3),
        "environment": environment(fields.get("device", "cpu")),
        "complete": True,
    }
    if kind == "reproduce" and not doc["measurements"]:
        del doc["measurements"]
    return doc


def _source_folder(paper: Paper) -> Path | None:
    """The folder of the package's registration module (for its git commit), or None."""
    module = sys.modules.get(paper.reproduce.split(":")[0].split(".")[0])
    where = getattr(module, "__file__", None)
    return Path(where).parent if where else None


def _run(paper: Paper, kind: str, folder: Path, call: Any) -> tuple[Report, float]:
    """Call the package's function; on Ctrl-C remove an empty run folder or mark it."""
    start = time.perf_counter()
    try:
        report = call()
    except KeyboardInterrupt:
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        elif folder.is_dir():
            (folder / "INCOMPLETE").write_text(f"{kind} interrupted at {now()}\n")
        raise
    if not isinstance(report, Report):
        raise TypeError(
            f"{paper.name}'s {kind} must return a paperkit.Report, not {type(report).__name__}"
        )
    return report, time.perf_counter() - start


def run_reproduce(
    paper: Paper,
    *,
    quick: bool = False,
    seed: int = 0,
    out: str | Path | None = None,
    data_root: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Path:
    """Seed, run the package's reproduction into its run folder, write results.json; return it.

    ``data_root`` (a folder of real data sets) is passed on as ``data_root=Path(...)`` only when
    given, so reproductions that need no data keep the plain signature. ``overrides`` are more
    keyword arguments of the package's function (tests use them to run at the smallest sizes).
    """
    fn = paper.load_reproduce()
    extra: dict[str, Any] = dict(overrides or {})
    if data_root is not None:
        if not _reads_data(fn):
            raise param_error(
                "data_root", f"{paper.name} reproduce", "unset (it reads no data folder)", data_root
            )
        extra["data_root"] = Path(data_root)
    folder = run_dir(paper.name, out)
    seed_everything(seed)
    report, wall = _run(
        paper, "reproduce", folder, lambda: fn(quick=quick, seed=seed, out=folder, **extra)
    )
    settings = {**report.settings}
    if data_root is not None:
        settings["data_root"] = str(data_root)
    report.settings = settings
    doc = _envelope(paper, "reproduce", report, folder, wall, seed=seed, quick=quick)
    return write_json(folder / "results.json", doc)


def _resolve_device(paper: Paper, device: str) -> str:
    if not isinstance(device, str) or not _DEVICE.match(device):
        raise param_error("device", f"{paper.name} bench", "auto, cpu, cuda or cuda:N", device)
    if device == "auto":
        from paperkit.devices import cuda_available

        return "cuda" if paper.gpu and cuda_available() else "cpu"
    if device.startswith("cuda") and not paper.gpu:
        raise param_error(
            "device", f"{paper.name} bench", "cpu (this package has no GPU code)", device
        )
    return device


def run_bench(
    paper: Paper,
    *,
    quick: bool = False,
    device: str = "auto",
    out: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Path:
    """Run the package's benchmark into its run folder, write bench.json; return it.
    ``overrides`` are more keyword arguments of the package's function, as for reproduce."""
    fn = paper.load_bench()
    device = _resolve_device(paper, device)
    folder = run_dir(paper.name, out, kind="bench")
    seed_everything(0)
    extra = dict(overrides or {})
    report, wall = _run(
        paper, "bench", folder, lambda: fn(quick=quick, device=device, out=folder, **extra)
    )
    doc = _envelope(paper, "bench", report, folder, wall, quick=quick, device=device)
    return write_json(folder / "bench.json", doc)


def latest_results(runs: str | Path, name: str) -> dict[str, Any] | None:
    """The newest complete ``results.json`` under ``runs/<name>/``, or None."""
    best: tuple[str, dict] | None = None
    for path in Path(runs, name).glob("*/results.json"):
        if (path.parent / "INCOMPLETE").exists():
            continue
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if doc.get("schema", "").startswith("paperkit.results/") and doc.get("complete"):
            key = str(doc.get("created", ""))
            if best is None or key > best[0]:
                best = (key, doc)
    return None if best is None else best[1]


def _headline(doc: Mapping[str, Any] | None) -> str:
    if doc is None:
        return "no run"
    claims = doc.get("claims") or []
    return claims[0]["verdict"] if claims else "no claim"


def report_rows(papers: Mapping[str, Paper], runs: str | Path) -> list[dict[str, Any]]:
    """One row per package: its latest run and how many of its claims held."""
    rows = []
    for name, paper in papers.items():
        doc = latest_results(runs, name)
        claims = (doc or {}).get("claims") or []
        counts = {v: sum(c["verdict"] == v for c in claims) for v in ("held", "partly", "not held")}
        rows.append(
            {
                "package": name,
                "status": paper.status,
                "run": (doc or {}).get("created", "—"),
                "quick": (doc or {}).get("quick", "—"),
                "headline": claims[0]["statement"] if claims else "—",
                "verdict": _headline(doc),
                "held": counts["held"],
                "partly": counts["partly"],
                "not held": counts["not held"],
                "claims": len(claims),
            }
        )
    return rows


def catalog_markdown(papers: Mapping[str, Paper]) -> str:
    """The catalog table of the root README, one row per installed paper package."""
    if not papers:
        return "_No paper packages yet._"
    rows = [
        {
            "package": f"[`{p.name}`](packages/{p.name})",
            "paper": p.title,
            "arXiv": f"[{p.arxiv}]({p.url})"
            if p.arxiv
            else (f"[paper]({p.url})" if p.url else "—"),
            "status": p.status,
        }
        for p in papers.values()
    ]
    return markdown_table(rows)


def _add_run_options(parser: argparse.ArgumentParser, kind: str) -> None:
    parser.add_argument("--quick", action="store_true", help="the small, about-one-minute run")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"folder for the outputs (default runs/<pkg>/{kind}…)",
    )
    if kind == "reproduce":
        parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
        parser.add_argument(
            "--data-root",
            type=Path,
            default=None,
            help="folder holding real data sets the reproduction reads (packages that use one)",
        )
    else:
        parser.add_argument(
            "--device", default="auto", help="auto, cpu, cuda or cuda:N (default auto)"
        )


def _reads_data(reproduce: Any) -> bool:
    return "data_root" in inspect.signature(reproduce).parameters


def _writable(out: Path | None) -> str | None:
    """Why ``--out`` cannot be written to, or None."""
    if out is None:
        out = Path("runs")
    probe = out
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable"
    return None


def _dispatch(paper: Paper, args: argparse.Namespace) -> int:
    err = Console(stderr=True, soft_wrap=True)
    problem = _writable(args.out)
    if problem is not None:
        err.print(f"[red]Cannot write the run to {args.out or 'runs/'}: {problem}.")
        return 2
    try:
        if args.command == "reproduce":
            if args.seed < 0:
                err.print(f"[red]--seed must be non-negative. Got {args.seed} instead.")
                return 2
            if args.data_root is not None and not _reads_data(paper.load_reproduce()):
                err.print(f"[red]{paper.name} reproduce reads no data folder: drop --data-root.")
                return 2
            path = run_reproduce(
                paper, quick=args.quick, seed=args.seed, out=args.out, data_root=args.data_root
            )
        else:
            if paper.bench is None:
                err.print(f"[red]Package {paper.name!r} registers no benchmark.")
                return 2
            try:
                _resolve_device(paper, args.device)
            except ValueError as exc:
                err.print(f"[red]{exc}")
                return 2
            path = run_bench(paper, quick=args.quick, device=args.device, out=args.out)
    except KeyboardInterrupt:
        err.print(f"[yellow]Interrupted: {paper.name} {args.command} stopped, no results written.")
        return 130
    except OSError as exc:
        err.print(f"[red]Cannot write the run: {exc.strerror or exc} ({exc.filename}).")
        return 2
    Console().print(f"Wrote {path}")
    return 0


def papers_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``papers`` command."""
    parser = argparse.ArgumentParser(
        prog="papers", description="The NeurIPS 2025 paper packages installed here."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="list the installed paper packages")
    listing.add_argument("--markdown", action="store_true", help="print the README catalog table")
    listing.add_argument("--runs", type=Path, default=Path("runs"), help="folder of runs (runs/)")
    report = sub.add_parser("report", help="the latest results of every package, in one table")
    report.add_argument("--runs", type=Path, default=Path("runs"), help="folder of runs (runs/)")
    report.add_argument("--markdown", action="store_true", help="print a markdown table")
    for kind in ("reproduce", "bench"):
        p = sub.add_parser(kind, help=f"run a package's {kind}")
        p.add_argument("name", help="package name, as `papers list` shows it")
        _add_run_options(p, kind)
    args = parser.parse_args(argv)
    console = Console()
    papers = discover()
    if args.command == "list":
        if args.markdown:
            print(catalog_markdown(papers))
        elif not papers:
            console.print("No paper packages are installed.")
        else:
            rows = [
                {
                    "name": p.name,
                    "paper": p.title,
                    "arXiv": p.arxiv or "—",
                    "status": p.status,
                    "verdict": _headline(latest_results(args.runs, p.name)),
                }
                for p in papers.values()
            ]
            print_table(rows, title="Paper packages", console=console)
        return 0
    if args.command == "report":
        rows = report_rows(papers, args.runs)
        if args.markdown:
            print(markdown_table(rows) if rows else "_No paper packages are installed._")
        else:
            print_table(rows, title=f"Latest runs under {args.runs}", console=console)
        return 0
    try:
        paper = get_paper(args.name, papers)
    except UnknownPaperError as exc:
        Console(stderr=True, soft_wrap=True).print(f"[red]{exc}")
        return 2
    return _dispatch(paper, args)


@dataclass(frozen=True)
class Command:
    """A package's own subcommand beside ``reproduce`` and ``bench``: ``configure`` adds its
    options to an ``argparse`` parser, ``run`` executes it on the parsed options and returns
    the exit status."""

    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def package_main(
    paper: Paper, argv: Sequence[str] | None = None, commands: Mapping[str, Command] | None = None
) -> int:
    """Entry point of a package's own command: ``<pkg> reproduce|bench [options]``, plus the
    package's own ``commands`` (e.g. ``dartquant quantize``)."""
    where = f" ({paper.url})" if paper.url else ""
    parser = argparse.ArgumentParser(prog=paper.name, description=f"{paper.title}{where}")
    sub = parser.add_subparsers(dest="command", required=True)
    for kind in ("reproduce", "bench"):
        _add_run_options(sub.add_parser(kind, help=f"run the {kind}"), kind)
    extra = dict(commands or {})
    for name, command in extra.items():
        command.configure(sub.add_parser(name, help=command.help))
    args = parser.parse_args(argv)
    if args.command in extra:
        return extra[args.command].run(args)
    return _dispatch(paper, args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(papers_main())
