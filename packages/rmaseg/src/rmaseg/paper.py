"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="rmaseg",
    title="RankSEG-RMA: An Efficient Segmentation Algorithm via Reciprocal Moment Approximation",
    arxiv="2510.15362",
    status="done",
    reproduce="rmaseg.reproduce:reproduce",
    bench="rmaseg.bench:bench",
    gpu=False,
)
