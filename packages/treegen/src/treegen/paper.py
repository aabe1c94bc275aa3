"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="treegen",
    title="TreeGen: Bayesian Flow Networks over hierarchies, applied to jet clustering",
    arxiv=None,  # the arXiv id was not found
    status="done",
    reproduce="treegen.reproduce:reproduce",
    bench="treegen.bench:bench",
    gpu=False,
)
