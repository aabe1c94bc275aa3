"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="hbp",
    title="Hierarchical Balance Packing: Towards Efficient Supervised Fine-tuning for "
    "Long-Context LLM",
    arxiv="2503.07680",
    status="done",
    reproduce="hbp.reproduce:reproduce",
    bench="hbp.bench:bench",
    gpu=False,
)
