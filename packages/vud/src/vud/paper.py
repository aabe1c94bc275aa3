"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="vud",
    title="Variational Uncertainty Decomposition for In-Context Learning",
    arxiv="2509.02327",
    status="done",
    reproduce="vud.reproduce:reproduce",
    bench="vud.bench:bench",
    gpu=False,
)
