"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="symgfm",
    title="Equivariance Everywhere All At Once: A Recipe for Graph Foundation Models",
    arxiv="2506.14291",
    status="done",
    reproduce="symgfm.reproduce:reproduce",
    bench="symgfm.bench:bench",
    gpu=False,
)
