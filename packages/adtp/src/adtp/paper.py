"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="adtp",
    title="Attribution-Driven Adaptive Token Pruning for Transformers",
    arxiv=None,  # a NeurIPS 2025 poster without an arXiv version (OpenReview MzN2Xi7EMa)
    status="done",
    reproduce="adtp.reproduce:reproduce",
    bench="adtp.bench:bench",
    gpu=False,
)
