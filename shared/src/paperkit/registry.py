"""The protocol by which a paper package registers itself with the ``papers`` command.

A package defines one :class:`Paper` and names it in its ``pyproject.toml``::

    [project.entry-points."paperkit.papers"]
    zeros = "zeros.paper:PAPER"

``reproduce`` and ``bench`` are ``"module:function"`` strings, imported only when run, so that
``papers list`` stays fast. Their signatures are::

    def reproduce(*, quick: bool, seed: int, out: pathlib.Path) -> paperkit.Report
    def bench(*, quick: bool, device: str, out: pathlib.Path) -> paperkit.Report

Each writes its figures into ``out`` and returns its results; the caller seeds everything first and
writes the returned mapping to ``out/results.json`` (``out/bench.json``).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from pkgutil import resolve_name
from typing import Any

from paperkit.checks import check_choice
from paperkit.errors import param_error

__all__ = ["ENTRY_POINT_GROUP", "STATUSES", "Paper", "UnknownPaperError", "discover", "get_paper"]

#: The entry-point group packages register in.
ENTRY_POINT_GROUP = "paperkit.papers"
#: ``in progress``: parts of the paper's method or evidence are missing; ``done``: the package
#: follows the whole package contract (root README) and reproduces its headline at small scale.
STATUSES = ("in progress", "done")

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_ARXIV = re.compile(r"^\d{4}\.\d{4,5}$")
_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


@dataclass(frozen=True)
class Paper:
    """What a package tells the ``papers`` command about itself.

    Attributes:
        name: the import and command name, e.g. ``"zeros"``.
        title: the paper's title.
        arxiv: the arXiv identifier, e.g. ``"2602.05230"``, or None when the paper has none.
        status: one of :data:`STATUSES`.
        reproduce: ``"module:function"`` running the headline experiment.
        bench: ``"module:function"`` running the benchmark, or None.
        gpu: whether the package has GPU kernels and GPU benchmarks.
        link: where to read the paper when it has no arXiv id (overrides the arXiv link).
    """

    name: str
    title: str
    arxiv: str | None
    status: str
    reproduce: str
    bench: str | None = None
    gpu: bool = False
    link: str | None = None

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise param_error("name", "Paper", "a lowercase identifier", self.name)
        if self.arxiv is not None and not _ARXIV.match(str(self.arxiv)):
            raise param_error(
                "arxiv", "Paper", "an arXiv id such as '2602.05230', or None", self.arxiv
            )
        if self.link is not None and not str(self.link).startswith(("https://", "http://")):
            raise param_error("link", "Paper", "an http(s) URL, or None", self.link)
        check_choice("status", "Paper", self.status, STATUSES)
        for field in ("reproduce", "bench"):
            target = getattr(self, field)
            if (target is not None or field == "reproduce") and not _TARGET.match(str(target)):
                raise param_error(field, "Paper", "a 'module:function' string", target)

    @property
    def url(self) -> str | None:
        """The paper's page: ``link`` when given, else its arXiv abstract (None without either)."""
        if self.link:
            return self.link
        return f"https://arxiv.org/abs/{self.arxiv}" if self.arxiv else None

    def load_reproduce(self) -> Callable[..., Any]:
        """Import and return the reproduce function."""
        return resolve_name(self.reproduce)

    def load_bench(self) -> Callable[..., Any]:
        """Import and return the bench function (ValueError when the package has none)."""
        if self.bench is None:
            raise ValueError(f"Package {self.name!r} registers no benchmark.")
        return resolve_name(self.bench)


class UnknownPaperError(LookupError):
    """A name that no installed package registered."""


def _entry_points() -> Iterable[metadata.EntryPoint]:
    return metadata.entry_points(group=ENTRY_POINT_GROUP)


def discover() -> dict[str, Paper]:
    """Every installed paper package by name, sorted; broken registrations warn, are skipped."""
    papers: dict[str, Paper] = {}
    for ep in _entry_points():
        try:
            paper = ep.load()
        except Exception as exc:  # a broken package must not hide the others
            warnings.warn(
                f"Cannot load paper package {ep.name!r} ({ep.value}): {exc}", stacklevel=2
            )
            continue
        if not isinstance(paper, Paper) or paper.name != ep.name:
            warnings.warn(
                f"Entry point {ep.name!r} ({ep.value}) must name a paperkit.Paper whose name is "
                f"{ep.name!r}; skipped.",
                stacklevel=2,
            )
            continue
        papers[paper.name] = paper
    return dict(sorted(papers.items()))


def get_paper(name: str, papers: dict[str, Paper] | None = None) -> Paper:
    """The registered package called ``name``; unknown names list the known ones."""
    papers = discover() if papers is None else papers
    if name in papers:
        return papers[name]
    known = ", ".join(papers) if papers else "none are installed"
    raise UnknownPaperError(f"Unknown paper package {name!r}. Known packages: {known}.")
