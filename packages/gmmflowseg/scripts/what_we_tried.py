"""The follow-up runs of the README's "What we tried": one variant per call, full-run settings.

    uv run python packages/gmmflowseg/scripts/what_we_tried.py VARIANT

VARIANT: ``longer`` (GMM+NF, 1,500 steps), ``punet-longer`` (PU-Net, 1,500 steps), ``wide``
(GMM+NF with mu_max=4, sigma_max=1.0, 500 steps). Lesions 32x32, 1,500 train / 200 test, base 8,
depth 3, Adam 1e-3, batch 16, 16 samples per test image, seed 0 (as ``gmmflowseg reproduce``).
"""

import sys

import torch

from gmmflowseg.data import make_ambiguous_lesions
from gmmflowseg.models import GMMFlowSegNet, ProbUNet
from gmmflowseg.reproduce import RUNS, _row, _run_method

torch.set_num_threads(1)
cfg = RUNS[False]
common = {"in_ch": 1, "n_classes": 2, "base": cfg["base"], "depth": cfg["depth"]}
VARIANTS = {
    "longer": ("GMM+NF 1500 steps", lambda: GMMFlowSegNet(**common), 1500),
    "punet-longer": ("PU-Net 1500 steps", lambda: ProbUNet(**common), 1500),
    "wide": (
        "GMM+NF mu_max=4 sigma_max=1",
        lambda: GMMFlowSegNet(**common, mu_max=4.0, sigma_max=1.0),
        500,
    ),
}
name, make, steps = VARIANTS[sys.argv[1]]
train = make_ambiguous_lesions(cfg["n_train"], size=cfg["size"], seed=0)
test = make_ambiguous_lesions(cfg["n_test"], size=cfg["size"], seed=10_000)
print(_row(name, _run_method(name, make, train, test, steps, 0)))
