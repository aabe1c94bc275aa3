"""Registration with the ``papers`` command."""

from paperkit import Paper

__all__ = ["PAPER"]

PAPER = Paper(
    name="gspn2",
    title="GSPN-2: Efficient Parallel Sequence Modeling",
    arxiv="2512.07884",
    status="done",
    reproduce="gspn2.reproduce:reproduce",
    bench="gspn2.bench:bench",
    gpu=True,
)
