"""Print the CI package matrix as JSON: every package, or those a change touches.

    python ci/matrix.py                 # {"package": ["paperkit", "zeros", ...]}
    python ci/matrix.py --since main    # only what changed since the revision `main`

A change under packages/<pkg>/ selects <pkg>; a change to paperkit (shared/) or to the workspace
itself (pyproject.toml, uv.lock, noxfile.py, ci/, .ci/, .github/) selects everything, since every
package builds on them. Other files (documentation) select nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ("shared/", "ci/", ".ci/", ".github/", "pyproject.toml", "uv.lock", "noxfile.py")


def all_members(root: Path = ROOT) -> list[str]:
    return ["paperkit", *sorted(p.parent.name for p in root.glob("packages/*/pyproject.toml"))]


def touched(paths: list[str], members: list[str]) -> list[str]:
    """The members a list of changed paths (relative to the root) selects, in matrix order."""
    if any(p.startswith(EVERYTHING) for p in paths):
        return members
    hit = {p.split("/")[1] for p in paths if p.startswith("packages/") and p.count("/") >= 2}
    return [m for m in members if m in hit]


def changed_since(revision: str, root: Path = ROOT) -> list[str]:
    diff = subprocess.run(
        ["git", "diff", "--name-only", revision, "--"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return [line for line in diff.stdout.splitlines() if line]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", metavar="REV", help="only packages changed since this revision")
    args = parser.parse_args(argv)
    members = all_members()
    selected = members if args.since is None else touched(changed_since(args.since), members)
    print(json.dumps({"package": selected}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
