"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="noisysubmod",
    title="A Unified Approach to Submodular Maximization Under Noise",
    arxiv="2510.21128",
    status="done",
    reproduce="noisysubmod.reproduce:reproduce",
    bench="noisysubmod.bench:bench",
    gpu=False,
)
