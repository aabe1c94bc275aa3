"""The ``bettingci`` command: ``bettingci reproduce [--quick] [--seed N] [--out DIR]``,
``bettingci bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from bettingci.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bettingci`` command."""
    return package_main(PAPER, argv)
