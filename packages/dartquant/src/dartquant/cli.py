"""The ``dartquant`` command: ``dartquant reproduce [--quick] [--seed N] [--out DIR]``,
``dartquant bench [--quick]`` and ``dartquant quantize --model PATH --out DIR --calib FILE``."""

from __future__ import annotations

from collections.abc import Sequence

from dartquant.paper import PAPER
from paperkit.cli import Command, package_main


def main(argv: Sequence[str] | None = None) -> int:
    from dartquant import checkpoint

    quantize = Command(
        "quantize a local transformers checkpoint and save it",
        checkpoint.configure,
        checkpoint.run,
    )
    return package_main(PAPER, argv, commands={"quantize": quantize})
