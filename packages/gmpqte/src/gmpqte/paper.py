"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="gmpqte",
    title="Efficient and Generalizable Mixed-Precision Quantization via Topological Entropy",
    arxiv=None,
    status="done",
    reproduce="gmpqte.reproduce:reproduce",
    bench="gmpqte.bench:bench",
    gpu=False,
)
