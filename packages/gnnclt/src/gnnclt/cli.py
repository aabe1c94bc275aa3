"""The ``gnnclt`` command: ``gnnclt reproduce [--quick] [--seed N] [--out DIR]``,
``gnnclt bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from gnnclt.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gnnclt`` command."""
    return package_main(PAPER, argv)
