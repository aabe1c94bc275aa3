"""The ``syncl`` command: ``syncl reproduce [--quick] [--seed N] [--out DIR]``, ``syncl bench``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from syncl.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
