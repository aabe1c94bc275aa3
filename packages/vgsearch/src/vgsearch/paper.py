"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="vgsearch",
    title="Rethinking Optimal Verification Granularity for Compute-Efficient Test-Time Scaling",
    arxiv="2505.11730",
    status="done",
    reproduce="vgsearch.reproduce:reproduce",
    bench="vgsearch.bench:bench",
    gpu=False,
)
