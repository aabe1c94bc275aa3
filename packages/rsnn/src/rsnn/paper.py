"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="rsnn",
    title="Random Search Neural Networks for Efficient and Expressive Graph Learning",
    arxiv="2510.22520",
    status="done",
    reproduce="rsnn.reproduce:reproduce",
    bench="rsnn.bench:bench",
)
