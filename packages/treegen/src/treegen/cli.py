"""The ``treegen`` command: ``treegen reproduce [--quick] [--seed N] [--out DIR]``,
``treegen bench``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from treegen.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
