"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="cbsa",
    title="Towards Interpretable and Efficient Attention: Compressing All by Contracting a Few",
    arxiv="2509.16875",
    status="done",
    reproduce="cbsa.reproduce:reproduce",
    bench="cbsa.bench:bench",
    gpu=False,
)
