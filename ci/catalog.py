"""Rewrite the catalog table of the root README from the installed packages (`papers list
--markdown`). Run in the workspace environment, where every package is installed:

    uv run python ci/catalog.py
"""

from __future__ import annotations

import re
from pathlib import Path

from paperkit.cli import catalog_markdown
from paperkit.registry import discover

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"(<!-- catalog:start -->\n).*?(\n<!-- catalog:end -->)", re.DOTALL)


def current_block(text: str) -> str:
    match = BLOCK.search(text)
    if match is None:
        raise ValueError("README.md has no <!-- catalog:start --> ... <!-- catalog:end --> block")
    return text[match.end(1) : match.start(2)]


def render(text: str) -> str:
    current_block(text)  # raises when the markers are missing
    return BLOCK.sub(lambda m: m.group(1) + catalog_markdown(discover()) + m.group(2), text)


if __name__ == "__main__":
    README.write_text(render(README.read_text()))
    print(f"Updated the catalog in {README}")
