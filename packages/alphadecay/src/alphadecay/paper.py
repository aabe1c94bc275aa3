"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="alphadecay",
    title="AlphaDecay: Module-wise Weight Decay for Heavy-Tailed Balancing in LLMs",
    arxiv="2506.14562",
    status="done",
    reproduce="alphadecay.reproduce:reproduce",
    bench="alphadecay.bench:bench",
    gpu=False,
)
