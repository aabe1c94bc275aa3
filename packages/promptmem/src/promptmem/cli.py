"""The ``promptmem`` command: ``promptmem reproduce [--quick] [--seed N] [--out DIR]``,
``promptmem bench [--quick]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from promptmem.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
