"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="graphtop",
    title="GraphTOP: Graph Topology-Oriented Prompting for Graph Neural Networks",
    arxiv="2510.22451",
    status="done",
    reproduce="graphtop.reproduce:reproduce",
    bench="graphtop.bench:bench",
    gpu=False,
)
