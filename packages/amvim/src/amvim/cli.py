"""The ``amvim`` command: ``amvim reproduce [--quick] [--seed N] [--out DIR]``, ``amvim bench``."""

from __future__ import annotations

from collections.abc import Sequence

from amvim.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
