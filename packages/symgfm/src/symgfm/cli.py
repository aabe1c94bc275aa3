"""The ``symgfm`` command: ``symgfm reproduce [--quick] [--seed N] [--out DIR]``,
``symgfm bench [--quick]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from symgfm.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
