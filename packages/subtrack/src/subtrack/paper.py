"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="subtrack",
    title="SubTrack++: Gradient Subspace Tracking for Scalable LLM Training",
    arxiv="2502.01586",
    status="done",
    reproduce="subtrack.reproduce:reproduce",
    bench="subtrack.bench:bench",
    gpu=False,
)
