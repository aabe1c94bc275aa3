"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="rccda",
    title="RCCDA: Adaptive Model Updates in the Presence of Concept Drift under a Constrained "
    "Resource Budget",
    arxiv="2505.24149",
    status="done",
    reproduce="rccda.reproduce:reproduce",
    bench="rccda.bench:bench",
    gpu=False,
)
