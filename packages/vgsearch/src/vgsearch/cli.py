"""The ``vgsearch`` command: ``vgsearch reproduce [--quick] [--seed N] [--out DIR]``,
``vgsearch bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from vgsearch.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``vgsearch`` command."""
    return package_main(PAPER, argv)
