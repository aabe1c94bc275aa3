"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="sama",
    title="SAMA: Towards Multi-Turn Referential Grounded Video Chat with Large Language Models",
    arxiv="2505.18812",
    status="done",
    gpu=False,
    reproduce="sama.reproduce:reproduce",
    bench="sama.bench:bench",
)
