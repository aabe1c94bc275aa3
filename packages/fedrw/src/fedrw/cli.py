"""The ``fedrw`` command: ``fedrw reproduce [--quick] [--seed N] [--out DIR]``,
``fedrw bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from fedrw.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fedrw`` command."""
    return package_main(PAPER, argv)
