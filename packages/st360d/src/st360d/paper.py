"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="st360d",
    title=(
        "ST²360D: Spatial-to-Temporal Consistency for Training-free 360° Monocular Depth Estimation"
    ),
    arxiv=None,
    status="done",
    reproduce="st360d.reproduce:reproduce",
    bench="st360d.bench:bench",
    link="https://caozidong.github.io/ST2360D_Depth",
)
