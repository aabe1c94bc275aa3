"""The ``factost`` command: ``factost reproduce [--quick] [--seed N] [--out DIR]``,
``factost bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from factost.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``factost`` command."""
    return package_main(PAPER, argv)
