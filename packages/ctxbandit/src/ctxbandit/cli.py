"""The ``ctxbandit`` command: ``ctxbandit reproduce [--quick] [--seed N] [--out DIR]``,
``ctxbandit bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from ctxbandit.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ctxbandit`` command."""
    return package_main(PAPER, argv)
