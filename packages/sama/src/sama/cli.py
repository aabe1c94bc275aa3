"""The ``sama`` command: ``sama reproduce [--quick] [--seed N] [--out DIR]``,
``sama bench [--quick]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from sama.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
