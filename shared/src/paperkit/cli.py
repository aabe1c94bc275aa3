"""The ``papers`` command, and the ``<pkg> reproduce|bench`` command every package exposes.

    papers list [--markdown]
    papers reproduce NAME [--quick] [--seed N] [--out DIR] [--data-root DIR]
    papers bench NAME [--quick] [--device auto|cpu|cuda] [--out DIR]

A package's own command is one line in its ``cli.py``::

    def main(argv=None):
        return package_main(PAPER, argv)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import inspect
import platform
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from rich.console import Console

from paperkit.errors import param_error
from paperkit.registry import Paper, UnknownPaperError, discover, get_paper
from paperkit.report import markdown_table, print_table, run_dir, write_json
from paperkit.seeding import seed_everything

__all__ = ["catalog_markdown", "package_main", "papers_main", "run_bench", "run_reproduce"]


def _versions(paper: Paper) -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for dist in ("numpy", "torch", "paperkit", paper.name):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[dist] = metadata.version(dist)
    return versions


def _envelope(paper: Paper, kind: str, options: Mapping[str, Any], results: Any) -> dict:
    return {
        "package": paper.name,
        "paper": {"title": paper.title, "arxiv": paper.arxiv},
        "kind": kind,
        "options": dict(options),
        "created": _dt.datetime.now().isoformat(timespec="seconds"),
        "versions": _versions(paper),
        "results": results,
    }


def run_reproduce(
    paper: Paper,
    *,
    quick: bool = False,
    seed: int = 0,
    out: str | Path | None = None,
    data_root: str | Path | None = None,
) -> Path:
    """Seed, run the package's reproduction into its run folder, write results.json; return it.

    ``data_root`` (a folder of real data sets) is passed on as ``data_root=Path(...)`` only when
    given, so reproductions that need no data keep the plain signature.
    """
    fn = paper.load_reproduce()
    extra: dict[str, Any] = {}
    if data_root is not None:
        if not _reads_data(fn):
            raise param_error(
                "data_root", f"{paper.name} reproduce", "unset (it reads no data folder)", data_root
            )
        extra["data_root"] = Path(data_root)
    folder = run_dir(paper.name, out)
    seed_everything(seed)
    results = fn(quick=quick, seed=seed, out=folder, **extra)
    options = {"quick": quick, "seed": seed, **{k: str(v) for k, v in extra.items()}}
    return write_json(folder / "results.json", _envelope(paper, "reproduce", options, results))


def run_bench(
    paper: Paper, *, quick: bool = False, device: str = "auto", out: str | Path | None = None
) -> Path:
    """Run the package's benchmark into its run folder, write bench.json; return it."""
    fn = paper.load_bench()
    if device == "auto":
        from paperkit.devices import cuda_available

        device = "cuda" if cuda_available() else "cpu"
    folder = run_dir(paper.name, out, kind="bench")
    seed_everything(0)
    results = fn(quick=quick, device=device, out=folder)
    options = {"quick": quick, "device": device}
    return write_json(folder / "bench.json", _envelope(paper, "bench", options, results))


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


def _dispatch(paper: Paper, args: argparse.Namespace, console: Console) -> int:
    if args.command == "reproduce":
        if args.seed < 0:
            console.print(f"[red]--seed must be non-negative. Got {args.seed} instead.")
            return 2
        if args.data_root is not None and not _reads_data(paper.load_reproduce()):
            console.print(f"[red]{paper.name} reproduce reads no data folder: drop --data-root.")
            return 2
        path = run_reproduce(
            paper, quick=args.quick, seed=args.seed, out=args.out, data_root=args.data_root
        )
    else:
        if paper.bench is None:
            console.print(f"[red]Package {paper.name!r} registers no benchmark.")
            return 2
        path = run_bench(paper, quick=args.quick, device=args.device, out=args.out)
    console.print(f"Wrote {path}")
    return 0


def papers_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``papers`` command."""
    parser = argparse.ArgumentParser(
        prog="papers", description="The NeurIPS 2025 paper packages installed here."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="list the installed paper packages")
    listing.add_argument("--markdown", action="store_true", help="print the README catalog table")
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
                {"name": p.name, "paper": p.title, "arXiv": p.arxiv or "—", "status": p.status}
                for p in papers.values()
            ]
            print_table(rows, title="Paper packages", console=console)
        return 0
    try:
        paper = get_paper(args.name, papers)
    except UnknownPaperError as exc:
        Console(stderr=True).print(f"[red]{exc}")
        return 2
    return _dispatch(paper, args, console)


def package_main(paper: Paper, argv: Sequence[str] | None = None) -> int:
    """Entry point of a package's own command: ``<pkg> reproduce|bench [options]``."""
    where = f" ({paper.url})" if paper.url else ""
    parser = argparse.ArgumentParser(prog=paper.name, description=f"{paper.title}{where}")
    sub = parser.add_subparsers(dest="command", required=True)
    for kind in ("reproduce", "bench"):
        _add_run_options(sub.add_parser(kind, help=f"run the {kind}"), kind)
    return _dispatch(paper, parser.parse_args(argv), Console())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(papers_main())
