"""The ``ldafront`` command: ``ldafront reproduce [--quick] [--seed N] [--out DIR]``,
``ldafront bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from ldafront.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ldafront`` command."""
    return package_main(PAPER, argv)
