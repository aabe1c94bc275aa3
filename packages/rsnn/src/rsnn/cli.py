"""The ``rsnn`` command: ``rsnn reproduce [--quick] [--seed N] [--out DIR]`` and ``rsnn bench``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from rsnn.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
