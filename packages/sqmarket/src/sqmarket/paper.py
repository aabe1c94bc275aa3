"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="sqmarket",
    title="Smooth Quadratic Prediction Markets",
    arxiv="2505.02959",
    status="done",
    reproduce="sqmarket.reproduce:reproduce",
    bench="sqmarket.bench:bench",
    gpu=False,
)
