"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="flyolf",
    title="Seemingly Redundant Modules Enhance Robust Odor Learning in Fruit Flies",
    arxiv="2510.21315",
    status="done",
    reproduce="flyolf.reproduce:reproduce",
    bench="flyolf.bench:bench",
    gpu=False,
)
