"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="tmex",
    title=(
        "The Third Pillar of Causal Analysis? A Measurement Perspective on Causal Representations"
    ),
    arxiv="2505.17708",
    status="done",
    reproduce="tmex.reproduce:reproduce",
    bench="tmex.bench:bench",
    gpu=False,
)
