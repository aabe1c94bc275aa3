"""The ``gradspo`` command: ``gradspo reproduce [--quick] [--seed N] [--out DIR]``,
``gradspo bench``."""

from __future__ import annotations

from collections.abc import Sequence

from gradspo.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
