"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="streamforest",
    title="StreamForest: Efficient Online Video Understanding with Persistent Event Memory",
    arxiv="2509.24871",
    status="done",
    reproduce="streamforest.reproduce:reproduce",
    bench="streamforest.bench:bench",
    gpu=False,
)
