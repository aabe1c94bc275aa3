"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="fairpareto",
    title="Efficient Fairness-Performance Pareto Front Computation",
    arxiv="2409.17643",
    status="done",
    reproduce="fairpareto.reproduce:reproduce",
    bench="fairpareto.bench:bench",
    gpu=False,
)
