"""The ``flyolf`` command: ``flyolf reproduce [--quick] [--seed N] [--out DIR]``,
``flyolf bench [--quick]``."""

from __future__ import annotations

from collections.abc import Sequence

from flyolf.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
