"""The ``graphtop`` command.

    graphtop reproduce [--quick] [--seed N] [--out DIR] [--data-root DIR]
    graphtop bench [--quick] [--out DIR]

``--data-root DIR`` (a folder holding ``Cora/raw``, PyG's Planetoid layout) adds Cora to the
reproduction.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphtop.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
