"""The ``rccda`` command: ``rccda reproduce [--quick] [--seed N] [--out DIR]``,
``rccda bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from rccda.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rccda`` command."""
    return package_main(PAPER, argv)
