"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="zeros",
    title="ZeroS: Zero-Sum Linear Attention for Efficient Transformers",
    arxiv="2602.05230",
    status="done",
    reproduce="zeros.reproduce:reproduce",
    bench="zeros.bench:bench",
    gpu=True,
)
