"""Registration with the ``papers`` command.

No arXiv identifier was found for this NeurIPS 2025 paper, so the record links to the NeurIPS 2025
paper search instead.
"""

from paperkit import Paper

__all__ = ["PAPER"]

PAPER = Paper(
    name="trussreg",
    title="k-truss based outlier rejection for correspondence-based point cloud registration",
    arxiv=None,
    status="done",
    reproduce="trussreg.reproduce:reproduce",
    bench="trussreg.bench:bench",
    gpu=True,
    link="https://neurips.cc/virtual/2025/papers.html?search=k-truss",
)
