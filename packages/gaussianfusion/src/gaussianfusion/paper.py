"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="gaussianfusion",
    title="GaussianFusion: Gaussian-Based Multi-Sensor Fusion for End-to-End Autonomous Driving",
    arxiv="2506.00034",
    status="done",
    reproduce="gaussianfusion.reproduce:reproduce",
    bench="gaussianfusion.bench:bench",
    gpu=True,  # the optional Triton splat; `gaussianfusion bench --device cuda` times it
)
