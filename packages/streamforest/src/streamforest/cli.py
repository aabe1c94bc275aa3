"""The ``streamforest`` command: ``streamforest reproduce [--quick] [--seed N] [--out DIR]``,
``streamforest bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from streamforest.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``streamforest`` command."""
    return package_main(PAPER, argv)
