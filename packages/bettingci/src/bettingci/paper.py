"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="bettingci",
    title="STaR-Bets: Sequential Target-Recalculating Bets for Tighter Confidence Intervals",
    arxiv="2505.22422",
    status="done",
    reproduce="bettingci.reproduce:reproduce",
    bench="bettingci.bench:bench",
    gpu=False,
)
