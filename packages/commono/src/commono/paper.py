"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="commono",
    title="What's in Common? Multimodal Models Hallucinate When Reasoning Across Scenes",
    arxiv="2511.03768",
    status="done",
    reproduce="commono.reproduce:reproduce",
    bench="commono.bench:bench",
    gpu=False,
)
