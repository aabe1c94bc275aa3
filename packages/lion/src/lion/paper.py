"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="lion",
    title="Linear Attention for Efficient Bidirectional Sequence Modeling (LION)",
    arxiv="2502.16249",
    status="done",
    reproduce="lion.reproduce:reproduce",
    bench="lion.bench:bench",
    gpu=True,
)
