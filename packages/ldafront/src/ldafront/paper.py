"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="ldafront",
    title=(
        "Audits Under Resource, Data, and Access Constraints: Scaling Laws for Less "
        "Discriminatory Alternatives"
    ),
    arxiv="2509.05627",
    status="done",
    reproduce="ldafront.reproduce:reproduce",
    bench="ldafront.bench:bench",
    gpu=False,
)
