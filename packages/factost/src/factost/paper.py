"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="factost",
    title="FactoST: Learning to Factorize Spatio-Temporal Foundation Models",
    arxiv=None,
    status="done",
    reproduce="factost.reproduce:reproduce",
    bench="factost.bench:bench",
    gpu=False,
)
