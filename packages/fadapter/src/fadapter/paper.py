"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="fadapter",
    title="F-Adapter: Frequency-Adaptive Parameter-Efficient Fine-Tuning in Scientific Machine "
    "Learning",
    arxiv="2509.23173",
    status="done",
    reproduce="fadapter.reproduce:reproduce",
    bench="fadapter.bench:bench",
    gpu=False,
)
