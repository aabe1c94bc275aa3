"""The ``sqmarket`` command: ``sqmarket reproduce [--quick] [--seed N] [--out DIR]``,
``sqmarket bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from sqmarket.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sqmarket`` command."""
    return package_main(PAPER, argv)
