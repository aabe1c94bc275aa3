"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="portrouter",
    title="Efficient Training-Free Online Routing for High-Volume Multi-LLM Serving",
    arxiv="2509.02718",
    status="done",
    reproduce="portrouter.reproduce:reproduce",
    bench="portrouter.bench:bench",
)
