"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="ctxbandit",
    title="An Improved Algorithm for Adversarial Linear Contextual Bandits via Reduction",
    arxiv="2508.11931",
    status="done",
    reproduce="ctxbandit.reproduce:reproduce",
    bench="ctxbandit.bench:bench",
    gpu=False,
)
