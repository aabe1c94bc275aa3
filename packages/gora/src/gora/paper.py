"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="gora",
    title="GoRA: Gradient-driven Adaptive Low Rank Adaptation",
    arxiv="2502.12171",
    status="done",
    reproduce="gora.reproduce:reproduce",
    bench="gora.bench:bench",
    gpu=False,
)
