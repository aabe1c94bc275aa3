"""The ``gspn2`` command: ``gspn2 reproduce [--quick] [--seed N] [--out DIR]``,
``gspn2 bench [--quick] [--device D] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from gspn2.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gspn2`` command."""
    return package_main(PAPER, argv)
