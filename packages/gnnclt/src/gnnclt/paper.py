"""Registration with the ``papers`` command.

No arXiv identifier was found for this NeurIPS 2025 paper, so the record links to the NeurIPS 2025
paper search instead.
"""

from paperkit import Paper

__all__ = ["PAPER"]

PAPER = Paper(
    name="gnnclt",
    title="A CLT for Polynomial GNNs on Community-Based Graphs",
    arxiv=None,
    status="done",
    reproduce="gnnclt.reproduce:reproduce",
    bench="gnnclt.bench:bench",
    gpu=False,
    link="https://neurips.cc/virtual/2025/papers.html?search=polynomial+GNNs+community",
)
