"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="mvou",
    title=(
        "Learning non-equilibrium diffusions with Schrödinger bridges: "
        "from exactly solvable to simulation-free"
    ),
    arxiv="2505.16644",
    status="done",
    reproduce="mvou.reproduce:reproduce",
    bench="mvou.bench:bench",
    gpu=False,
)
