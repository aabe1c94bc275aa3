"""The ``zrdetr`` command: ``zrdetr reproduce [--quick] [--uda] [--seed N] [--out DIR]``,
``zrdetr bench [--quick]``.

``--uda`` adds the mean-teacher domain adaptation to the reproduction (outside the 10-minute
budget of the full run)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from paperkit.cli import package_main
from zrdetr.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["reproduce"] and "--uda" in args:
        return _reproduce_uda([a for a in args[1:] if a != "--uda"])
    return package_main(PAPER, args)


def _reproduce_uda(args: list[str]) -> int:
    import argparse
    from pathlib import Path

    from paperkit.cli import run_reproduce

    parser = argparse.ArgumentParser(prog="zrdetr reproduce --uda")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    opts = parser.parse_args(args)
    if opts.seed < 0:
        parser.error("--seed must be non-negative")
    path = run_reproduce(
        PAPER, quick=opts.quick, seed=opts.seed, out=opts.out, overrides={"uda": True}
    )
    print(f"Wrote {path}")
    return 0
