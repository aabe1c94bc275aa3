"""Registration with the ``papers`` command.

No arXiv identifier was found for this NeurIPS 2025 paper, so the record links to the NeurIPS 2025
paper search instead.
"""

from paperkit import Paper

__all__ = ["PAPER"]

PAPER = Paper(
    name="rsmlearn",
    title="Efficient PAC Learning for Realizable-Statistic Models via Convex Surrogates",
    arxiv=None,
    status="done",
    reproduce="rsmlearn.reproduce:reproduce",
    bench="rsmlearn.bench:bench",
    gpu=False,
    link="https://neurips.cc/virtual/2025/papers.html?search=realizable-statistic+models",
)
