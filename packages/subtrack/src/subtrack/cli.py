"""The ``subtrack`` command: ``subtrack reproduce [--quick] [--seed N] [--out DIR]``, ``bench``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from subtrack.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
