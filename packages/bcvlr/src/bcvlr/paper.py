"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="bcvlr",
    title="Videos are Sample-Efficient Supervisions: Behavior Cloning from Videos via Latent "
    "Representations",
    arxiv="2512.21586",
    status="done",
    reproduce="bcvlr.reproduce:reproduce",
    bench="bcvlr.bench:bench",
    gpu=False,
)
