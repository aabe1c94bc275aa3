"""The ``fairpareto`` command: ``fairpareto reproduce [--quick] [--seed N] [--out DIR]``,
``fairpareto bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from fairpareto.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fairpareto`` command."""
    return package_main(PAPER, argv)
