"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="syncl",
    title=(
        "SynCL: A Synergistic Training Strategy with Instance-Aware Contrastive Learning for "
        "End-to-End Multi-Camera 3D Tracking"
    ),
    arxiv="2411.06780",
    status="done",
    reproduce="syncl.reproduce:reproduce",
    bench="syncl.bench:bench",
)
