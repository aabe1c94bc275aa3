"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="oraclebandit",
    title="Oracle-Efficient Combinatorial Semi-Bandits",
    arxiv="2510.21431",
    status="done",
    reproduce="oraclebandit.reproduce:reproduce",
    bench="oraclebandit.bench:bench",
    gpu=False,
)
